// weft's own sin, cos and tan (kernels/vmath/trigonometric.ts): their constants against pi
// computed anew; their ulp error against the double-double reference over the whole float64
// domain, near multiples of pi/2 too (the hardest-to-reduce doubles found per binade by continued
// fractions); special values; and the JS functions against the WebAssembly loops, bit for bit.
import t from 'tap';
import { loopModuleBytes, type ElemwiseProgram } from '../../src/kernels/elemwise-wasm.js';
import { jsOps } from '../../src/kernels/vmath/functions.js';
import { cos, cosOf, PIO2_PARTS, sin, sinOf, tan, tanOf, TRIG_REDUCTION_LIMIT, TWO_OVER_PI_BITS } from '../../src/kernels/vmath/trigonometric.js';
import { sameNumber, uniformStream } from '../helpers.js';
import * as reference from './reference-math.js';

const COUNT = Number(process.env['WEFT_ACCURACY_COUNT'] ?? 1_000_000);

/** 2^bits * sum (-1)^k / ((2k+1) n^(2k+1)) = 2^bits atan(1/n), truncated at each term. */
function atanInverse(n: bigint, bits: number): bigint {
  let power = (1n << BigInt(bits)) / n;
  let sum = 0n;
  for (let k = 0n; power !== 0n; k++, power /= n * n) sum += (k % 2n === 0n ? 1n : -1n) * (power / (2n * k + 1n));
  return sum;
}

/** Fraction bits of PI_BIG: enough for 2/pi's bits at the far end of the largest binade. */
const FRACTION = 1400;
/** pi 2^FRACTION (Machin: pi = 16 atan(1/5) - 4 atan(1/239)), good to a few units of 2^-1380. */
const PI_BIG = (16n * atanInverse(5n, FRACTION + 20) - 4n * atanInverse(239n, FRACTION + 20)) >> 20n;
/** 2/pi 2^FRACTION. */
const TWO_OVER_PI_BIG = (1n << BigInt(2 * FRACTION + 1)) / PI_BIG;

/** A double as m 2^e, m an integer (exact). */
function bigOf(x: number): { readonly m: bigint; readonly e: number } {
  const e = reference.exponentOf(x) - 52;
  return { m: BigInt(reference.ldexp(x, -e)), e };
}

t.test('the constants: 2/pi in 23-bit chunks and pi/2 in parts, against pi computed anew', async (t) => {
  const chunks = TWO_OVER_PI_BITS.map((c, j) => BigInt(c) === ((TWO_OVER_PI_BIG >> BigInt(FRACTION - 23 * (j + 1))) & 0x7fffffn));
  t.ok(chunks.every(Boolean), `each of the ${chunks.length} chunks is 2/pi's bits`);
  let rest = PI_BIG << 200n; // pi/2 2^(FRACTION + 201)
  const scale = FRACTION + 201;
  PIO2_PARTS.forEach((p, i) => {
    const { m, e } = bigOf(p);
    if (i < PIO2_PARTS.length - 1) t.ok(m.toString(2).replace(/0+$/, '').length <= 21, `part ${i} has at most 21 significant bits`);
    rest -= m << BigInt(scale + e);
  });
  const error = Number((rest < 0n ? -rest : rest) >> 1300n) * 2 ** (1300 - scale);
  t.ok(error < 2 ** -158, `the parts sum to pi/2 within ${error.toExponential(2)} (2^${Math.log2(error).toFixed(1)})`);
});

/**
 * Doubles close to multiples of pi/2, the closest few per binade 2^[0, 1024): x = M 2^(e-52) with
 * M in [2^52, 2^53) is near k pi/2 when M a, a = frac(2^(e-52) 2/pi), is near an integer, so M is
 * taken among the multiples of a's continued-fraction denominators (convergents and intermediate
 * fractions) and kept if among the PER_BINADE closest. 6381956970095103 * 2^797, the hardest double
 * of all (|x - k pi/2| ~ 2^-61), is among them.
 */
function hardToReduce(): number[] {
  const PER_BINADE = 6;
  const BITS = 256n;
  const ONE = 1n << BITS;
  const low = 1n << 52n;
  const high = 1n << 53n;
  const found: number[] = [];
  for (let e = 0; e < 1024; e++) {
    const shift = BigInt(FRACTION) - BITS - BigInt(e - 52);
    const a = (shift >= 0n ? TWO_OVER_PI_BIG >> shift : TWO_OVER_PI_BIG << -shift) & (ONE - 1n);
    const candidates = new Map<bigint, bigint>();
    const consider = (m: bigint): void => {
      if (m < low || m >= high || candidates.has(m)) return;
      const f = (m * a) & (ONE - 1n);
      candidates.set(m, f < ONE - f ? f : ONE - f);
    };
    // The continued fraction of a / 2^BITS, while its denominators are below 2^53.
    let [num, den] = [a, ONE];
    let [qPrev, q] = [0n, 1n];
    while (num !== 0n && q < high) {
      const c = den / num;
      [num, den] = [den - c * num, num];
      for (const j of new Set([1n, 2n, c - 1n, c])) {
        const d = qPrev + j * q;
        if (j < 1n || d >= high) continue;
        const first = (low + d - 1n) / d;
        for (const m of [first * d, (first + 1n) * d, d]) consider(m);
      }
      [qPrev, q] = [q, qPrev + c * q];
    }
    const closest = [...candidates].sort((x, y) => (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0)).slice(0, PER_BINADE);
    for (const [m] of closest) found.push(reference.ldexp(Number(m), e - 52));
  }
  found.push(6381956970095103 * 2 ** 797);
  return [...new Set(found)];
}

const HARD = hardToReduce();

/** log2 |x - k pi/2| for the nearest k (pi/2 times the distance of x 2/pi to an integer). */
function distanceToMultiple(x: number): number {
  const { m, e } = bigOf(Math.abs(x));
  const v = m * TWO_OVER_PI_BIG * (e >= 0 ? 1n << BigInt(e) : 1n); // x 2/pi 2^(FRACTION - min(e, 0))
  const bits = BigInt(FRACTION + Math.max(-e, 0));
  const frac = v & ((1n << bits) - 1n);
  const d = frac > 1n << (bits - 1n) ? (1n << bits) - frac : frac;
  return Math.log2(Number(d >> (bits - 200n))) - 200 + Math.log2(Math.PI / 2);
}

t.test(`the hard inputs: ${HARD.length} doubles near multiples of pi/2`, async (t) => {
  const distances = HARD.filter((x) => x > 2).map(distanceToMultiple);
  const closest = distances.reduce((p, d) => Math.min(p, d), 0);
  const median = distances.sort((p, q) => p - q)[distances.length >> 1]!;
  t.ok(closest < -60.5, `the closest 2^${closest.toFixed(2)} away, the median 2^${median.toFixed(2)}`);
});

const SPREADS = ['uniform on [-10, 10]', `uniform on ±${TRIG_REDUCTION_LIMIT}`, 'log-spaced 10^[-300, 308]', 'near k pi/2'] as const;

/**
 * COUNT inputs: the hard ones (random signs), then in turn uniform on [-10, 10], uniform on
 * ±TRIG_REDUCTION_LIMIT, log-spaced magnitudes of both signs, and k pi/2 rounded (k below 2^50,
 * log-spaced) moved by -2..2 ulps. Each input is tagged with its spread.
 */
function inputs(seed: number): { readonly xs: Float64Array; readonly spread: Uint8Array } {
  const u = uniformStream(seed);
  const xs = new Float64Array(COUNT);
  const spread = new Uint8Array(COUNT);
  for (let i = 0; i < COUNT; i++) {
    const sign = u() < 0.5 ? -1 : 1;
    if (i < HARD.length) {
      xs[i] = sign * HARD[i]!;
      spread[i] = 3;
      continue;
    }
    const s = i % 4;
    spread[i] = s;
    if (s === 0) xs[i] = 20 * u() - 10;
    else if (s === 1) xs[i] = (2 * u() - 1) * TRIG_REDUCTION_LIMIT;
    else if (s === 2) xs[i] = sign * 10 ** (608 * u() - 300);
    else {
      const k = Math.floor(2 ** (50 * u()));
      const x = reference.mulNumber(reference.HALF_PI, k).hi;
      const ulp = 2 ** (reference.exponentOf(x) - 52);
      xs[i] = sign * (x + (Math.floor(5 * u()) - 2) * ulp);
    }
  }
  return { xs, spread };
}

const round32 = Math.fround;
const FUNCTIONS = [
  { name: 'sin', f: sin, of: sinOf, ref: reference.sin },
  { name: 'cos', f: cos, of: cosOf, ref: reference.cos },
  { name: 'tan', f: tan, of: tanOf, ref: reference.tan },
] as const;

FUNCTIONS.forEach(({ name, f, ref }, n) => {
  t.test(`${name}: ${COUNT} inputs over the whole float64 domain, float64 and float32, against the double-double reference`, async (t) => {
    const { xs, spread } = inputs(2000 + n);
    const worst = SPREADS.map(() => ({ ulps: 0, at: NaN }));
    for (let i = 0; i < COUNT; i++) {
      const e = reference.ulpError(f(xs[i]!), ref(xs[i]!));
      const w = worst[spread[i]!]!;
      if (e > w.ulps) [w.ulps, w.at] = [e, xs[i]!];
    }
    SPREADS.forEach((s, k) => t.ok(worst[k]!.ulps <= 2, `float64, ${s}: at most ${worst[k]!.ulps.toFixed(3)} ulp (at ${worst[k]!.at}; bound 2)`));
    // Computed in float64 and rounded once: a tenth of the inputs suffice.
    let w32 = 0;
    let at32 = NaN;
    for (let i = 0; i < Math.ceil(COUNT / 10); i++) {
      const x = round32(xs[i]!);
      const e = reference.ulpError32(round32(f(x)), ref(x));
      if (e > w32) [w32, at32] = [e, x];
    }
    t.ok(w32 <= 2, `float32: at most ${w32.toFixed(3)} ulp (at ${at32}; bound 2)`);
  });
});


t.test('special values', async (t) => {
  const tiny = [5e-324, 2 ** -1070, 2 ** -1030, 2.2250738585072014e-308, 1e-300, 2 ** -60, 2 ** -27];
  const cases: Array<[string, (x: number) => number, number, number]> = [];
  for (const [name, f] of [['sin', sin], ['tan', tan]] as const) {
    cases.push([name, f, 0, 0], [name, f, -0, -0]);
    // sin x and tan x round to x below 2^-26 (|x|^3/6 and |x|^3/3 are under half an ulp).
    for (const x of tiny) cases.push([name, f, x, x], [name, f, -x, -x]);
  }
  cases.push(['cos', cos, 0, 1], ['cos', cos, -0, 1]);
  for (const x of tiny) cases.push(['cos', cos, x, 1], ['cos', cos, -x, 1]);
  for (const { name, f } of FUNCTIONS) for (const x of [Infinity, -Infinity, NaN]) cases.push([name, f, x, NaN]);
  for (const [name, f, x, want] of cases) {
    const got = f(x);
    t.ok(sameNumber(got, want), `${name}(${Object.is(x, -0) ? '-0' : x}) = ${got} (${want})`);
  }
});

/** Inputs below TRIG_REDUCTION_LIMIT in magnitude, of every kind, and special values among them. */
function smallInputs(n: number, seed: number): Float64Array {
  const u = uniformStream(seed);
  const special = [0, -0, 5e-324, -5e-324, 1e-310, NaN, Math.PI / 2, -Math.PI, TRIG_REDUCTION_LIMIT - 1];
  return Float64Array.from({ length: n }, (_, i) => {
    if (i < special.length) return special[i]!;
    const sign = u() < 0.5 ? -1 : 1;
    switch (i % 4) {
      case 0: return 20 * u() - 10;
      case 1: return (2 * u() - 1) * TRIG_REDUCTION_LIMIT;
      case 2: return sign * 10 ** (309.6 * u() - 300);
      default: return sign * reference.mulNumber(reference.HALF_PI, Math.floor(2 ** (31 * u()))).hi;
    }
  });
}

t.test('the JS functions are the compiled FloatOps functions below the limit', async (t) => {
  const xs = smallInputs(3001, 7);
  for (const { name, f, of } of FUNCTIONS) {
    const bad = [...xs].filter((x) => !sameNumber(f(x), of(jsOps, x)));
    t.same(bad, [], `${name}: every input gives ${name}Of's bits over jsOps`);
  }
});

t.test('the WebAssembly loops give the JS bits below the limit, SIMD part and scalar tail, float64 and float32', async (t) => {
  const memory = new WebAssembly.Memory({ initial: 4, maximum: 65536, shared: true });
  for (const dtype of ['float64', 'float32'] as const) {
    const Typed = dtype === 'float64' ? Float64Array : Float32Array;
    const round = dtype === 'float64' ? (x: number) => x : round32;
    // An odd length, so that the SIMD blocks leave a scalar tail.
    const xs = Typed.from(smallInputs(4003, dtype === 'float64' ? 11 : 13).map(round).filter((x) => !(Math.abs(x) >= TRIG_REDUCTION_LIMIT)));
    const n = xs.length - (xs.length % 2 === 0 ? 1 : 0);
    for (const { name, f } of FUNCTIONS) {
      const program: ElemwiseProgram = { inputs: [dtype], steps: [{ op: name, args: [0], dtype }] };
      const run = new WebAssembly.Instance(new WebAssembly.Module(loopModuleBytes(program, ['c'])), { env: { memory } }).exports['run'] as (start: number, end: number, out: number, x: number) => number;
      const bytes = xs.BYTES_PER_ELEMENT * n;
      new Typed(memory.buffer, 0, n).set(xs.subarray(0, n));
      run(0, n, bytes, 0);
      const out = new Typed(memory.buffer, bytes, n);
      const bad: string[] = [];
      for (let i = 0; i < n; i++) {
        const want = round(f(xs[i]!));
        if (!sameNumber(out[i]!, want)) bad.push(`${name}(${xs[i]}) = ${out[i]} in wasm, ${want} in JS`);
      }
      t.same(bad.slice(0, 5), [], `${dtype} ${name}: ${n} elements (an odd number: a scalar tail), the same bits`);
    }
  }
});
