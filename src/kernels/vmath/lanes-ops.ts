// The vector math functions' operations (FloatOps) as WebAssembly, through Lanes: scalar f64 or
// f64x2 lanes, constants splat where used.
import type { F, FArg, Lanes, M } from './lanes.js';
import type { LogOps } from './logarithms.js';

export function lanesOps(l: Lanes): LogOps<FArg, M> {
  const f = (a: FArg): F => l.val(a);
  return {
    c: (x) => x,
    add: (a, b) => l.add(a, b),
    sub: (a, b) => l.sub(a, b),
    mul: (a, b) => l.mul(a, b),
    div: (a, b) => l.div(a, b),
    min: (a, b) => l.min(a, b),
    max: (a, b) => l.max(a, b),
    abs: (a) => l.abs(a),
    sqrt: (a) => l.sqrt(a),
    lt: (a, b) => l.lt(a, b),
    gt: (a, b) => l.gt(a, b),
    eq: (a, b) => l.eq(a, b),
    isNaN: (a) => l.isNaN(f(a)),
    sel: (m, a, b) => l.sel(m, a, b),
    copysign: (a, s) => l.copysign(a, s),
    scale: (p, k) => {
      const n = l.toInt(f(k));
      const half = l.shrS(n, 1);
      return l.mul(l.mul(p, l.pow2(half)), l.pow2(l.isub(n, half)));
    },
    exponent: (a) => l.toFloat(l.isub(l.iand(l.shrU(l.bits(f(a)), 52), 0x7ffn), 1023n)),
    significand: (a) => l.fromBits(l.ior(l.iand(l.bits(f(a)), 0x000fffffffffffffn), 0x3ff0000000000000n)),
  };
}
