// The WebAssembly element-wise loops (issue 12): every program operation in float32 and float64,
// contiguous and broadcast inputs, ranges cut at random points, against an independent per-element
// evaluation that rounds each step as the JS loops do (bit for bit, NaN-ness for NaN); the layouts
// they decline; and compiled functions on a pool (wasm) against the reference executor (JS loops
// on ordinary memory), with the same bits on 0 and 2 workers.
import t from 'tap';
import { ReferenceExecutor } from '../../src/graph/reference-executor.js';
import { COMPARISONS, runProgram, type ElemwiseProgram, type ProgramDtype, type ProgramOp, type WasmAccess } from '../../src/kernels/elemwise-wasm.js';
import type { TensorView } from '../../src/kernels/view.js';
import { exp32, tanh32 } from '../../src/kernels/vmath/float32.js';
import * as vmath from '../../src/kernels/vmath/functions.js';
import { scalarLib } from '../../src/kernels/scalar-lib.js';
import { Arena } from '../../src/workers/arena.js';
import { pt, rng, weft } from '../helpers.js';

const arena = new Arena(1 << 24);
const ARRAY = { float32: Float32Array, float64: Float64Array } as const;

/** One value of an op, rounded to the dtype as the JS loops round each step. */
function apply(op: ProgramOp, args: readonly number[], dtype: ProgramDtype): number {
  const r = dtype === 'float32' ? Math.fround : (x: number) => x;
  switch (op) {
    case 'add': return args.slice(1).reduce((p, q) => r(p + q), args[0]!);
    case 'mul': return args.slice(1).reduce((p, q) => r(p * q), args[0]!);
    case 'sub': return r(args[0]! - args[1]!);
    case 'div': return r(args[0]! / args[1]!);
    case 'neg': return -args[0]!;
    case 'abs': return Math.abs(args[0]!);
    case 'sqrt': return r(Math.sqrt(args[0]!));
    case 'sqr': return r(args[0]! * args[0]!);
    case 'min': return Math.min(args[0]!, args[1]!);
    case 'max': return Math.max(args[0]!, args[1]!);
    case 'exp': return dtype === 'float32' ? exp32(args[0]!) : vmath.exp(args[0]!);
    case 'tanh': return dtype === 'float32' ? tanh32(args[0]!) : vmath.tanh(args[0]!);
    // Computed in float64, rounded once.
    case 'expm1':
    case 'log':
    case 'log1p':
    case 'sigmoid':
    case 'softplus':
    case 'erf':
    case 'erfc':
    case 'log2':
    case 'log10':
    case 'sinh':
    case 'cosh':
      return r(scalarLib[op](args[0]!));
    case 'arctan':
      return r(scalarLib.atan(args[0]!));
    case 'arcsin':
      return r(scalarLib.asin(args[0]!));
    case 'arccos':
      return r(scalarLib.acos(args[0]!));
    // Bools are 0 and 1 where numbers are used; a condition holds unless it is 0 (NaN holds).
    case 'eq': return args[0] === args[1] ? 1 : 0;
    case 'ne': return args[0] !== args[1] ? 1 : 0;
    case 'lt': return args[0]! < args[1]! ? 1 : 0;
    case 'le': return args[0]! <= args[1]! ? 1 : 0;
    case 'gt': return args[0]! > args[1]! ? 1 : 0;
    case 'ge': return args[0]! >= args[1]! ? 1 : 0;
    case 'where': return args[0] !== 0 ? args[1]! : args[2]!;
    case 'cast': return args[0]!;
  }
}

const ARITY: Record<ProgramOp, number> = {
  add: 3, mul: 3, sub: 2, div: 2, neg: 1, abs: 1, sqrt: 1, sqr: 1, min: 2, max: 2, exp: 1, tanh: 1,
  expm1: 1, log: 1, log1p: 1, sigmoid: 1, softplus: 1, erf: 1, erfc: 1, log2: 1, log10: 1, sinh: 1, cosh: 1, arctan: 1, arcsin: 1, arccos: 1, eq: 2, ne: 2, lt: 2, le: 2, gt: 2, ge: 2, where: 3, cast: 1,
};


/**
 * The programs that exercise `op`: the op alone; a comparison's bool as a condition and as a
 * number (it cannot be a program's output).
 */
function programsOf(op: ProgramOp, nin: number, dtype: ProgramDtype): ElemwiseProgram[] {
  const args = [...Array(nin).keys()];
  if (!COMPARISONS.has(op)) return [{ dtype, nin, steps: [{ op, args }] }];
  return [
    { dtype, nin, steps: [{ op, args }, { op: 'where', args: [nin, 0, 1] }] },
    { dtype, nin, steps: [{ op, args }, { op: 'mul', args: [nin, 1] }, { op: 'add', args: [nin, nin + 1] }] },
    { dtype, nin, steps: [{ op, args }, { op: 'cast', args: [nin] }] },
  ];
}

/** Values with the awkward cases: zeros of both signs, infinities, NaN, tiny and huge numbers. */
function values(n: number, seed: number, dtype: ProgramDtype): Float64Array {
  const special = [0, -0, Infinity, -Infinity, NaN, 1e-40, -1e-310, 3e38, -7, 0.5];
  const g = rng(seed).normal([n]).data as Float64Array;
  const out = Float64Array.from(g, (v, i) => (i % 13 === 0 ? special[(i / 13) % special.length]! : v * 10));
  return dtype === 'float32' ? Float64Array.from(out, Math.fround) : out;
}

function inArena(dtype: ProgramDtype, data: ArrayLike<number>): TensorView {
  const a = arena.array(dtype, data.length) as Float32Array | Float64Array;
  a.set(data);
  return { data: a, offset: 0, shape: [data.length], stride: [1] };
}

/** The element-i value of each step of `program`, for inputs read by `access`. */
function evaluate(program: ElemwiseProgram, inputs: readonly Float64Array[], access: readonly WasmAccess[], i: number): number {
  const vals = inputs.map((x, k) => (access[k] === 's' ? x[0]! : x[i]!));
  for (const s of program.steps) vals.push(apply(s.op, s.args.map((a) => vals[a]!), program.dtype));
  return vals[vals.length - 1]!;
}

const same = (a: number, b: number): boolean => (Number.isNaN(a) ? Number.isNaN(b) : Object.is(a, b));

t.test('every op and dtype, contiguous and broadcast inputs, ranges cut anywhere: the bits of the JS rounding', async (t) => {
  const n = 1037;
  let seed = 1;
  for (const dtype of ['float32', 'float64'] as const) {
    for (const op of Object.keys(ARITY) as ProgramOp[]) {
      const nin = ARITY[op];
      const layouts: WasmAccess[][] = nin === 1 ? [['c']] : [Array<WasmAccess>(nin).fill('c'), ['s', ...Array<WasmAccess>(nin - 1).fill('c')], [...Array<WasmAccess>(nin - 1).fill('c'), 's']];
      for (const [access, program] of layouts.flatMap((a) => programsOf(op, nin, dtype).map((p) => [a, p] as const))) {
        const inputs = access.map((a, k) => values(a === 's' ? 1 : n, seed++, dtype));
        const views = inputs.map((x, k): TensorView => {
          const v = inArena(dtype, x);
          return access[k] === 's' ? { ...v, shape: [n], stride: [0] } : v;
        });
        const out = inArena(dtype, new Float64Array(n));
        // Three ranges: the SIMD part and tails of every length are exercised.
        const cuts = [0, 1 + (seed % 7), 500 + (seed % 5), n];
        for (let c = 0; c + 1 < cuts.length; c++) t.ok(runProgram(program, views, out, { start: cuts[c]!, end: cuts[c + 1]! }), 'wasm ran');
        const bad: string[] = [];
        for (let i = 0; i < n; i++) {
          const want = evaluate(program, inputs, access, i);
          const got = out.data[i]!;
          if (!same(got, want) && bad.length < 3) bad.push(`[${i}] ${got} vs ${want} (inputs ${inputs.map((x, k) => x[access[k] === 's' ? 0 : i]).join(', ')})`);
        }
        t.same(bad, [], `${program.steps.map((p) => p.op).join(', ')} ${dtype} ${access.join('')}`);
      }
    }
  }
});

t.test('a fused program: steps reading inputs and earlier steps, several times', async (t) => {
  const n = 999;
  for (const dtype of ['float32', 'float64'] as const) {
    // ((x * y + w) / max(x, w)) - sqrt(abs(x * y + w))
    const program: ElemwiseProgram = {
      dtype,
      nin: 3,
      steps: [
        { op: 'mul', args: [0, 1] },
        { op: 'add', args: [3, 2] },
        { op: 'max', args: [0, 2] },
        { op: 'div', args: [4, 5] },
        { op: 'abs', args: [4] },
        { op: 'sqrt', args: [7] },
        { op: 'sub', args: [6, 8] },
      ],
    };
    const inputs = [1, 2, 3].map((s) => values(n, 40 + s, dtype));
    const views = inputs.map((x) => inArena(dtype, x));
    const out = inArena(dtype, new Float64Array(n));
    t.ok(runProgram(program, views, out, undefined));
    let bad = 0;
    for (let i = 0; i < n; i++) if (!same(out.data[i]!, evaluate(program, inputs, ['c', 'c', 'c'], i))) bad++;
    t.equal(bad, 0, `${dtype}: every element`);
  }
});

t.test('layouts the loops decline: the JS loops run instead', async (t) => {
  const program: ElemwiseProgram = { dtype: 'float32', nin: 2, steps: [{ op: 'add', args: [0, 1] }] };
  const x = inArena('float32', [1, 2, 3, 4]);
  const out = inArena('float32', [0, 0, 0, 0]);
  const plain: TensorView = { data: new Float32Array(4), offset: 0, shape: [4], stride: [1] };
  t.notOk(runProgram(program, [x, plain], out, undefined), 'an input outside the attached memory');
  t.notOk(runProgram(program, [x, { ...x, shape: [2], stride: [2] }], { ...out, shape: [2] }, undefined), 'a strided input');
  t.notOk(runProgram(program, [x, inArena('float64', [1, 2, 3, 4])], out, undefined), 'another dtype');
  t.notOk(runProgram(program, [x, x], { ...out, shape: [2, 2], stride: [1, 2] }, undefined), 'a transposed output');
  t.ok(runProgram(program, [x, { ...x, shape: [2, 2], stride: [0, 1] }], { ...out, shape: [2, 2], stride: [2, 1] }, undefined) === false, "a repeated row is the JS loop's");
});

t.test('compiled functions: wasm on the pool, the bits of the JS loops, on 0 and 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  for (const dtype of ['float32', 'float64'] as const) {
    const x = pt.vector('x', dtype);
    const y = pt.vector('y', dtype);
    const w = pt.vector('w', dtype);
    const graphs: Array<[string, weft.TensorVariable]> = [
      ['x * y + w', x.mul(y).add(w)],
      ['sqrt(abs(x)) / y - max(x, w) * 2', pt.sqrt(pt.abs(x)).div(y).sub(pt.maximum(x, w).mul(2))],
      ['min(x, y) - (-w) ** 2', pt.minimum(x, y).sub(pt.sqr(w.neg()))],
      ['where(x > y, x * w, -w) + (x <= w) * y', pt.where(x.gt(y), x.mul(w), w.neg()).add(x.le(w).mul(y))],
      ['float(x != y) - float(w < 0) * x', pt.cast(x.neq(y), dtype).sub(pt.cast(w.lt(0), dtype).mul(x))],
      ['log1p(|x|) * sigmoid(y) + softplus(w) - log(|w|) + expm1(x / 8)', pt.log1p(pt.abs(x)).mul(pt.sigmoid(y)).add(pt.softplus(w)).sub(pt.log(pt.abs(w))).add(pt.expm1(x.div(8)))],
    ];
    const n = 1 << 17;
    const args = [1, 2, 3].map((s) => Float64Array.from(values(n, 70 + s, dtype))).map((a) => (dtype === 'float32' ? Float32Array.from(a) : a));
    for (const [what, z] of graphs) {
      const reference = new ReferenceExecutor(new weft.FunctionGraph([x, y, w], [z]));
      const want = reference.run(args.map((a) => weft.ndarray(a))) as weft.NdArray[];
      for (const workers of [0, 2]) {
        const fn = await weft.compile([x, y, w], z, { pool, workers });
        const got = await fn(...(args as [Float64Array, Float64Array, Float64Array]));
        let bad = 0;
        for (let i = 0; i < n; i++) if (!same(got.data[i]!, want[0]!.data[i]!)) bad++;
        t.equal(bad, 0, `${dtype} ${what}, workers ${workers}: equal bits`);
      }
    }
  }
});

t.test('bias rows and repeated elements (blocks of 64 or more): row by row, ranges cut inside rows', async (t) => {
  const [rows, cols] = [7, 100];
  const n = rows * cols;
  for (const dtype of ['float32', 'float64'] as const) {
    // (x + row) * column: x contiguous, row repeated along axis 0, column repeated along axis 1.
    const program: ElemwiseProgram = { dtype, nin: 3, steps: [{ op: 'add', args: [0, 1] }, { op: 'mul', args: [3, 2] }] };
    const [x, row, column] = [values(n, 91, dtype), values(cols, 92, dtype), values(rows, 93, dtype)];
    const views: TensorView[] = [
      { ...inArena(dtype, x), shape: [rows, cols], stride: [cols, 1] },
      { ...inArena(dtype, row), shape: [rows, cols], stride: [0, 1] },
      { ...inArena(dtype, column), shape: [rows, cols], stride: [1, 0] },
    ];
    const out = { ...inArena(dtype, new Float64Array(n)), shape: [rows, cols], stride: [cols, 1] };
    for (const [start, end] of [[0, 37], [37, 350], [350, n]] as const) t.ok(runProgram(program, views, out, { start, end }), `wasm ran on [${start}, ${end})`);
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const want = apply('mul', [apply('add', [x[i]!, row[i % cols]!], dtype), column[Math.floor(i / cols)]!], dtype);
      if (!same(out.data[i]!, want)) bad++;
    }
    t.equal(bad, 0, `${dtype}: every element`);
  }
});

t.test("an output outside the memory (a call's fresh array) is staged in the thread's block and copied out", async (t) => {
  const n = 50_000; // several pieces of the 64 KiB block
  for (const dtype of ['float32', 'float64'] as const) {
    const program: ElemwiseProgram = { dtype, nin: 2, steps: [{ op: 'exp', args: [0] }, { op: 'mul', args: [2, 1] }] };
    const round = dtype === 'float32' ? Math.fround : (v: number) => v;
    const [x, y] = [values(n, 95, dtype).map((v) => round(v / 100)), values(n, 96, dtype)];
    const out: TensorView = { data: new ARRAY[dtype](n + 3), offset: 3, shape: [n], stride: [1] };
    for (const [start, end] of [[0, 1001], [1001, n]] as const) t.ok(runProgram(program, [inArena(dtype, x), inArena(dtype, y)], out, { start, end }));
    let bad = 0;
    for (let i = 0; i < n; i++) if (!same(out.data[3 + i]!, apply('mul', [apply('exp', [x[i]!], dtype), y[i]!], dtype))) bad++;
    t.equal(bad, 0, `${dtype}: every element`);
    t.equal(out.data[2], 0, 'nothing written before the view');
  }
});
