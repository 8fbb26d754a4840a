// WebAssembly SIMD lanes of softmax, log-softmax and the gradient of softmax (softmax.ts), for
// contiguous float32 or float64 lanes in the arena: the same computation as the JS lanes (in
// float64, but for float32 softmax's exp), with the same bits. A lane's maximum is IEEE's (order-free); its sums are row-partials.ts's eight
// partials; exp and log are weft's own (vmath), on f64x2 lanes (inline); every element is rounded once.
import { foldBlocks64 } from './reduce-wasm.js';
import { ROW_PARTIALS } from './row-partials.js';
import { emitFunction, inlineMathFunction, mathFunction } from './vmath/wasm-library.js';
import { Body, F64, HIGH_HALF, I32, LOW_HALVES, ModuleBuilder, V128, type Op } from './wasm-emit.js';
import { instanceFor } from './wasm-instances.js';

export type SoftmaxDtype = 'float32' | 'float64';

/** softmax(x, n, out, scratch): one lane of n elements; scratch holds n float64 values. */
type Softmax = (x: number, n: number, out: number, scratch: number) => void;
/** logSoftmax(x, n, out). */
type LogSoftmax = (x: number, n: number, out: number) => void;
/** softmaxGrad(dy, sm, n, out). */
type SoftmaxGrad = (dy: number, sm: number, n: number, out: number) => void;

export interface SoftmaxLanes {
  readonly softmax: Softmax;
  readonly logSoftmax: LogSoftmax;
  readonly softmaxGrad: SoftmaxGrad;
}

/** The code of one lane function: its locals and the loops every kind is made of. */
class LaneCode {
  readonly size: number;
  readonly j: number;
  readonly end: number;

  constructor(
    readonly body: Body,
    readonly dtype: SoftmaxDtype,
  ) {
    this.size = dtype === 'float32' ? 4 : 8;
    this.j = body.local(I32);
    this.end = body.local(I32);
  }

  /** Pushes elements j, j + 1 of the lane at `base` (+ `ahead` elements) as an f64x2. */
  pair(base: number, ahead: number): void {
    this.body.get(base).get(this.j).i32(this.size === 4 ? 2 : 3).op('i32.shl').i32Add();
    if (this.dtype === 'float64') this.body.v128Load(ahead * 8);
    else this.body.mem('v128.load64_zero', ahead * 4).op('f64x2.promote_low_f32x4');
  }

  /** Pushes element j of the lane at `base` as an f64. */
  one(base: number): void {
    this.body.get(base).get(this.j).i32(this.size === 4 ? 2 : 3).op('i32.shl').i32Add();
    if (this.dtype === 'float64') this.body.mem('f64.load');
    else this.body.mem('f32.load').op('f64.promote_f32');
  }

  /** Pushes the address of element j of the float64 scratch. */
  scratchAt(scratch: number): void {
    this.body.get(scratch).get(this.j).i32(3).op('i32.shl').i32Add();
  }

  /**
   * for j in steps of `step` while j + step <= n, then one by one: `wide` for each step, `narrow`
   * for each of the rest (j is the element index).
   */
  loops(n: number, step: number, wide: () => void, narrow: () => void): void {
    const b = this.body;
    b.i32(0).set(this.j);
    b.get(n).i32(-step).op('i32.and').set(this.end);
    b.block().loop();
    b.get(this.j).get(this.end).op('i32.ge_u').brIf(1);
    wide();
    b.get(this.j).i32(step).i32Add().set(this.j).br(0);
    b.end().end();
    b.block().loop();
    b.get(this.j).get(n).op('i32.ge_u').brIf(1);
    narrow();
    b.get(this.j).i32(1).i32Add().set(this.j).br(0);
    b.end().end();
  }

  /** IEEE maximum of the lane at `x` into a new f64 local (order-free). */
  max(x: number, n: number): number {
    return this.dtype === 'float32' ? this.max32(x, n) : this.max64(x, n);
  }

  /**
   * The maximum of float32 elements in float32 lanes (exact, and order-free: the same value as in
   * float64), sixteen a step in four independent vectors: in float64 lanes, two a vector in one
   * chain of maxima, it was half of a 1024-wide softmax lane's time.
   */
  max32(x: number, n: number): number {
    const b = this.body;
    const [q, end] = [b.local(I32), b.local(I32)];
    const extremes = b.local(V128);
    const m = b.local(F64);
    b.get(x).set(q);
    b.get(x).get(n).i32(-16).op('i32.and').i32(2).op('i32.shl').i32Add().set(end);
    foldBlocks64(b, q, end, () => b.f32x4(-Infinity), 'f32x4.max');
    b.set(extremes);
    b.f64(-Infinity);
    for (let lane = 0; lane < 4; lane++) b.get(extremes).lane('f32x4.extract_lane', lane).op('f64.promote_f32', 'f64.max');
    b.set(m);
    // The rest, one by one.
    b.get(n).i32(-16).op('i32.and').set(this.j);
    b.block().loop();
    b.get(this.j).get(n).op('i32.ge_u').brIf(1);
    b.get(m);
    this.one(x);
    b.op('f64.max').set(m);
    b.get(this.j).i32(1).i32Add().set(this.j).br(0);
    b.end().end();
    return m;
  }

  max64(x: number, n: number): number {
    const b = this.body;
    const acc = [b.local(V128), b.local(V128)];
    const m = b.local(F64);
    for (const a of acc) b.f64x2(-Infinity).set(a);
    b.f64(-Infinity).set(m);
    this.loops(
      n,
      4,
      () => acc.forEach((a, k) => {
        b.get(a);
        this.pair(x, 2 * k);
        b.op('f64x2.max').set(a);
      }),
      () => {
        b.get(m);
        this.one(x);
        b.op('f64.max').set(m);
      },
    );
    b.get(acc[0]!).get(acc[1]!).op('f64x2.max').set(acc[0]!);
    b.get(m).get(acc[0]!).lane('f64x2.extract_lane', 0).op('f64.max').get(acc[0]!).lane('f64x2.extract_lane', 1).op('f64.max').set(m);
    return m;
  }

  /**
   * The sum, in row-partials.ts's order (from +0), of the lane's values made by `pair` (an f64x2
   * of elements j + 2k, j + 2k + 1 pushed for k < 4) and `one` (element j pushed).
   */
  sum(n: number, pair: (k: number) => void, one: () => void): number {
    const b = this.body;
    const acc = [b.local(V128), b.local(V128), b.local(V128), b.local(V128)];
    const s = b.local(F64);
    const c = b.local(V128);
    for (const a of acc) b.f64x2(0).set(a);
    b.i32(0).set(this.j);
    b.get(n).i32(-ROW_PARTIALS).op('i32.and').set(this.end);
    b.block().loop();
    b.get(this.j).get(this.end).op('i32.ge_u').brIf(1);
    acc.forEach((a, k) => {
      b.get(a);
      pair(k);
      b.op('f64x2.add').set(a);
    });
    b.get(this.j).i32(ROW_PARTIALS).i32Add().set(this.j).br(0);
    b.end().end();
    b.get(acc[0]!).get(acc[1]!).op('f64x2.add').get(acc[2]!).get(acc[3]!).op('f64x2.add').op('f64x2.add').set(c);
    b.f64(0).get(c).lane('f64x2.extract_lane', 0).get(c).lane('f64x2.extract_lane', 1).op('f64.add').op('f64.add').set(s);
    b.block().loop();
    b.get(this.j).get(n).op('i32.ge_u').brIf(1);
    b.get(s);
    one();
    b.op('f64.add').set(s);
    b.get(this.j).i32(1).i32Add().set(this.j).br(0);
    b.end().end();
    return s;
  }

  /**
   * out_j for j < n, four elements a step and then one by one: `pair(k)` pushes elements j + 2k
   * and j + 2k + 1 (k = 0, 1) as an f64x2, `one` pushes element j as an f64; each is rounded to
   * the dtype once, on store.
   */
  write(n: number, out: number, pair: (k: number) => void, one: () => void): void {
    const b = this.body;
    const lo = b.local(V128);
    const hi = b.local(V128);
    this.loops(
      n,
      4,
      () => {
        pair(0);
        b.set(lo);
        pair(1);
        b.set(hi);
        this.storeFour(out, lo, hi);
      },
      () => this.storeOne(out, one),
    );
  }

  /** Stores the f64x2 `a` (elements j, j + 1) and `b` (j + 2, j + 3) into the lane at `out`, rounded to the dtype. */
  storeFour(out: number, a: number, c: number): void {
    const b = this.body;
    b.get(out).get(this.j).i32(this.size === 4 ? 2 : 3).op('i32.shl').i32Add();
    if (this.dtype === 'float64') {
      b.get(a).v128Store();
      b.get(out).get(this.j).i32(3).op('i32.shl').i32Add().get(c).v128Store(16);
      return;
    }
    b.get(a).op('f32x4.demote_f64x2_zero').get(c).op('f32x4.demote_f64x2_zero').shuffle(LOW_HALVES).v128Store();
  }

  /** Stores the f64 on the stack as element j of the lane at `out`; `value` pushes it. */
  storeOne(out: number, value: () => void): void {
    const b = this.body;
    b.get(out).get(this.j).i32(this.size === 4 ? 2 : 3).op('i32.shl').i32Add();
    value();
    if (this.dtype === 'float64') b.mem('f64.store');
    else b.op('f32.demote_f64').mem('f32.store');
  }
}

/**
 * softmax: m = max, e_j = exp(x_j - m) kept in scratch (float64) and summed, out_j = e_j / sum.
 * float32 lanes compute x_j - m and its exp in float32 arithmetic (vmath/float32.ts, four lanes a
 * vector: a float32 exp is within 1 ulp), float64 lanes in float64.
 */
function softmaxBody(module: ModuleBuilder, dtype: SoftmaxDtype): Body {
  const body = new Body([I32, I32, I32, I32]).hoistConstants();
  const [X, N, OUT, SCRATCH] = [0, 1, 2, 3];
  const code = new LaneCode(body, dtype);
  const m = code.max(X, N);
  const v = body.local(V128);
  const t = body.local(F64);
  const float32 = dtype === 'float32';
  // float32: m splat in four float32 lanes, and the four exps of elements j + 2k .. j + 2k + 3.
  const m4 = body.local(V128);
  const e4 = body.local(V128);
  if (float32) body.get(m).op('f32.demote_f64', 'f32x4.splat').set(m4);
  const s = code.sum(
    N,
    (k) => {
      if (!float32) {
        code.pair(X, 2 * k);
        body.get(m).op('f64x2.splat').op('f64x2.sub');
        inlineMathFunction(body, 'exp');
      } else if (k % 2 === 0) {
        body.get(X).get(code.j).i32(2).op('i32.shl').i32Add().v128Load(8 * k).get(m4).op('f32x4.sub');
        emitFunction(body, 'exp', 'f32x4', module);
        body.tee(e4).op('f64x2.promote_low_f32x4');
      } else body.get(e4).get(e4).shuffle(HIGH_HALF).op('f64x2.promote_low_f32x4');
      body.set(v);
      code.scratchAt(SCRATCH);
      body.get(v).v128Store(16 * k);
      body.get(v);
    },
    () => {
      if (float32) {
        body.get(X).get(code.j).i32(2).op('i32.shl').i32Add().mem('f32.load').get(m).op('f32.demote_f64').op('f32.sub');
        emitFunction(body, 'exp', 'f32', module);
        body.op('f64.promote_f32').set(t);
      } else {
        code.one(X);
        body.get(m).op('f64.sub').call(mathFunction(module, 'exp', false)).set(t);
      }
      code.scratchAt(SCRATCH);
      body.get(t).mem('f64.store');
      body.get(t);
    },
  );
  // float32: e_j times 1 / sum in float64, rounded once to float32 (a division per element would
  // cost more than the exp); float64: e_j / sum.
  const scale = body.local(V128);
  if (float32) body.f64(1).get(s).op('f64.div', 'f64x2.splat').set(scale);
  else body.get(s).op('f64x2.splat').set(scale);
  const by = float32 ? 'mul' : 'div';
  code.write(
    N,
    OUT,
    (k) => {
      code.scratchAt(SCRATCH);
      body.v128Load(16 * k).get(scale).op(`f64x2.${by}`);
    },
    () => {
      code.scratchAt(SCRATCH);
      body.mem('f64.load').get(scale).lane('f64x2.extract_lane', 0).op(`f64.${by}`);
    },
  );
  return body;
}

/** log-softmax: m = max, the sum of exp(x_j - m), out_j = (x_j - m) - log(sum). */
function logSoftmaxBody(module: ModuleBuilder, dtype: SoftmaxDtype): Body {
  const body = new Body([I32, I32, I32]).hoistConstants();
  const [X, N, OUT] = [0, 1, 2];
  const code = new LaneCode(body, dtype);
  const exp1 = mathFunction(module, 'exp', false);
  const log1 = mathFunction(module, 'log', false);
  const m = code.max(X, N);
  const s = code.sum(
    N,
    (k) => {
      code.pair(X, 2 * k);
      body.get(m).op('f64x2.splat').op('f64x2.sub');
      inlineMathFunction(body, 'exp');
    },
    () => {
      code.one(X);
      body.get(m).op('f64.sub').call(exp1);
    },
  );
  const logSum = body.local(F64);
  body.get(s).call(log1).set(logSum);
  code.write(
    N,
    OUT,
    (k) => {
      code.pair(X, 2 * k);
      body.get(m).op('f64x2.splat').op('f64x2.sub').get(logSum).op('f64x2.splat').op('f64x2.sub');
    },
    () => {
      code.one(X);
      body.get(m).op('f64.sub').get(logSum).op('f64.sub');
    },
  );
  return body;
}

/** The gradient of softmax: dot = the sum of dy_j sm_j, out_j = (dy_j - dot) sm_j. */
function softmaxGradBody(dtype: SoftmaxDtype): Body {
  const body = new Body([I32, I32, I32, I32]).hoistConstants();
  const [DY, SM, N, OUT] = [0, 1, 2, 3];
  const code = new LaneCode(body, dtype);
  const dot = code.sum(
    N,
    (k) => {
      code.pair(DY, 2 * k);
      code.pair(SM, 2 * k);
      body.op('f64x2.mul');
    },
    () => {
      code.one(DY);
      code.one(SM);
      body.op('f64.mul');
    },
  );
  code.write(
    N,
    OUT,
    (k) => {
      code.pair(DY, 2 * k);
      body.get(dot).op('f64x2.splat').op('f64x2.sub');
      code.pair(SM, 2 * k);
      body.op('f64x2.mul');
    },
    () => {
      code.one(DY);
      body.get(dot).op('f64.sub');
      code.one(SM);
      body.op('f64.mul');
    },
  );
  return body;
}

/** The module bytes of one dtype's lanes, exported as `softmax`, `logSoftmax` and `softmaxGrad`. */
export function softmaxModuleBytes(dtype: SoftmaxDtype): Uint8Array<ArrayBuffer> {
  const module = new ModuleBuilder();
  module.export('softmax', module.function('softmax', () => softmaxBody(module, dtype)));
  module.export('logSoftmax', module.function('logSoftmax', () => logSoftmaxBody(module, dtype)));
  module.export('softmaxGrad', module.function('softmaxGrad', () => softmaxGradBody(dtype)));
  return module.bytes();
}

/** The lanes over `dtype` for `memory`, compiled once and instantiated once per memory and thread. */
export function softmaxLanesFor(memory: WebAssembly.Memory, dtype: SoftmaxDtype): SoftmaxLanes {
  return instanceFor(memory, `softmax|${dtype}`, () => softmaxModuleBytes(dtype), (e) => ({
    softmax: e['softmax'] as Softmax,
    logSoftmax: e['logSoftmax'] as LogSoftmax,
    softmaxGrad: e['softmaxGrad'] as SoftmaxGrad,
  }));
}
