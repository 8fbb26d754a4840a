// The WebAssembly element-wise loops (issue 12): every program operation in float32 and float64,
// int32 and bool operations, mixed dtypes, contiguous and broadcast inputs, ranges cut at random
// points, against an independent per-element evaluation that rounds each step as the JS loops do
// (bit for bit, NaN-ness for NaN); the programs and layouts they decline; and compiled functions
// on a pool (wasm) against the reference executor (JS loops on ordinary memory), with the same
// bits on 0 and 2 workers.
import t from 'tap';
import { ReferenceExecutor } from '../../src/graph/reference-executor.js';
import {
  COMPARISONS,
  isRunnable,
  loopModuleBytes,
  programProblem,
  runProgram,
  valueDtype,
  type ElemwiseProgram,
  type ProgramDtype,
  type ProgramOp,
  type ProgramStep,
  type WasmAccess,
} from '../../src/kernels/elemwise-wasm.js';
import type { TensorView } from '../../src/kernels/view.js';
import { exp32, tanh32 } from '../../src/kernels/vmath/float32.js';
import * as vmath from '../../src/kernels/vmath/functions.js';
import { isMathFunction } from '../../src/kernels/vmath/wasm-library.js';
import { scalarLib } from '../../src/kernels/scalar-lib.js';
import { Arena } from '../../src/workers/arena.js';
import { pt, rng, sameNumber, weft } from '../helpers.js';

const arena = new Arena(1 << 24);
const ARRAY = { float32: Float32Array, float64: Float64Array, int32: Int32Array, bool: Uint8Array } as const;

/** `x` stored as dtype `d`, as a typed array of d stores it (bools: nonzero, NaN included, is 1). */
function stored(d: ProgramDtype, x: number): number {
  switch (d) {
    case 'float64': return x;
    case 'float32': return Math.fround(x);
    case 'int32': return x | 0;
    case 'bool': return x !== 0 ? 1 : 0;
  }
}

/** One step's value, computed as the JS loops compute it (each operand a number, the result stored as the step's dtype). */
function apply(op: ProgramOp, args: readonly number[], dtype: ProgramDtype): number {
  const r = dtype === 'float32' ? Math.fround : (x: number) => x;
  const int = dtype === 'int32';
  const v = ((): number => {
    switch (op) {
      case 'add': return int ? args.reduce((p, q) => p + q) : args.slice(1).reduce((p, q) => r(p + q), args[0]!);
      case 'mul': return int ? args.reduce((p, q) => Math.imul(p, q)) : args.slice(1).reduce((p, q) => r(p * q), args[0]!);
      case 'sub': return args[0]! - args[1]!;
      case 'div': return args[0]! / args[1]!;
      case 'neg': return -args[0]!;
      case 'abs': return Math.abs(args[0]!);
      case 'sqrt': return Math.sqrt(args[0]!);
      case 'sqr': return int ? Math.imul(args[0]!, args[0]!) : args[0]! * args[0]!;
      case 'min': return Math.min(args[0]!, args[1]!);
      case 'clip': return Math.min(Math.max(args[0]!, args[1]!), args[2]!);
      case 'sign': return scalarLib.sign(args[0]!);
      case 'floor': return Math.floor(args[0]!);
      case 'ceil': return Math.ceil(args[0]!);
      case 'round': return scalarLib.roundHalfEven(args[0]!);
      case 'max': return Math.max(args[0]!, args[1]!);
      case 'exp': return dtype === 'float32' ? exp32(args[0]!) : vmath.exp(args[0]!);
      case 'tanh': return dtype === 'float32' ? tanh32(args[0]!) : vmath.tanh(args[0]!);
      case 'arctan': return scalarLib.atan(args[0]!);
      case 'arcsin': return scalarLib.asin(args[0]!);
      case 'arccos': return scalarLib.acos(args[0]!);
      case 'arctan2': return scalarLib.atan2(args[0]!, args[1]!);
      case 'pow': return scalarLib.pow(args[0]!, args[1]!);
      case 'logaddexp': return scalarLib.logaddexp(args[0]!, args[1]!);
      case 'xlogy0': return scalarLib.xlogy0(args[0]!, args[1]!);
      case 'trunc': return Math.trunc(args[0]!);
      // Bools are 0 and 1 where numbers are used; a condition holds unless it is 0 (NaN holds).
      case 'eq': return args[0] === args[1] ? 1 : 0;
      case 'ne': return args[0] !== args[1] ? 1 : 0;
      case 'lt': return args[0]! < args[1]! ? 1 : 0;
      case 'le': return args[0]! <= args[1]! ? 1 : 0;
      case 'gt': return args[0]! > args[1]! ? 1 : 0;
      case 'ge': return args[0]! >= args[1]! ? 1 : 0;
      case 'where': return args[0] !== 0 ? args[1]! : args[2]!;
      case 'cast': return args[0]!;
      case 'and': return args[0]! & args[1]!;
      case 'or': return args[0]! | args[1]!;
      case 'xor': return args[0]! ^ args[1]!;
      case 'not': return dtype === 'bool' ? (args[0] === 0 ? 1 : 0) : ~args[0]!;
      // The other math functions: computed in float64, rounded once.
      default: return (scalarLib as unknown as Record<string, (x: number) => number>)[op]!(args[0]!);
    }
  })();
  return stored(dtype, v);
}

/** The float ops (every math function among them) and their numbers of arguments (3 for variadic ones). */
const ARITY: Partial<Record<ProgramOp, number>> = {
  add: 3, mul: 3, sub: 2, div: 2, neg: 1, abs: 1, sqrt: 1, sqr: 1, min: 2, max: 2, clip: 3, sign: 1, floor: 1, ceil: 1, round: 1, exp: 1, tanh: 1,
  expm1: 1, log: 1, log1p: 1, sigmoid: 1, softplus: 1, erf: 1, erfc: 1, log2: 1, log10: 1, sinh: 1, cosh: 1, arctan: 1, arcsin: 1, arccos: 1, sin: 1, cos: 1, tan: 1, arctan2: 2, pow: 2, arcsinh: 1, arccosh: 1, arctanh: 1, log1mexp: 1, logit: 1, xlogx: 1, logaddexp: 2, xlogy0: 2, trunc: 1, eq: 2, ne: 2, lt: 2, le: 2, gt: 2, ge: 2, where: 3, cast: 1,
};

/** A program whose inputs all have `dtype`, and steps of that dtype unless a step names its own. */
function uniform(dtype: ProgramDtype, nin: number, steps: ReadonlyArray<{ op: ProgramOp; args: readonly number[]; dtype?: ProgramDtype; value?: number }>): ElemwiseProgram {
  return { inputs: Array<ProgramDtype>(nin).fill(dtype), steps: steps.map((s) => ({ dtype, ...s })) };
}

/**
 * The programs that exercise `op` on `dtype`: the op alone; a comparison's bool as a condition,
 * as a number, and stored as a bool output.
 */
function programsOf(op: ProgramOp, nin: number, dtype: ProgramDtype): ElemwiseProgram[] {
  const args = [...Array(nin).keys()];
  if (!COMPARISONS.has(op)) return [uniform(dtype, nin, [{ op, args }])];
  return [
    uniform(dtype, nin, [{ op, args, dtype: 'bool' }, { op: 'where', args: [nin, 0, 1] }]),
    uniform(dtype, nin, [{ op, args, dtype: 'bool' }, { op: 'mul', args: [nin, 1] }, { op: 'add', args: [nin, nin + 1] }]),
    uniform(dtype, nin, [{ op, args, dtype: 'bool' }, { op: 'cast', args: [nin] }]),
    uniform(dtype, nin, [{ op, args, dtype: 'bool' }]),
  ];
}

/** Values with the awkward cases: zeros of both signs, infinities, NaN, tiny and huge numbers; int32 extremes; bools. */
function values(n: number, seed: number, dtype: ProgramDtype): Float64Array {
  const g = rng(seed).normal([n]).data as Float64Array;
  if (dtype === 'bool') return Float64Array.from(g, (v) => (v > 0 ? 1 : 0));
  if (dtype === 'int32') {
    const special = [0, -1, 1, 2147483647, -2147483648, 65536, -65537];
    return Float64Array.from(g, (v, i) => (i % 11 === 0 ? special[(i / 11) % special.length]! : Math.round(v * (i % 3 === 0 ? 1e9 : 100)) | 0));
  }
  const special = [0, -0, Infinity, -Infinity, NaN, 1e-40, -1e-310, 3e38, -7, 0.5, -0.5, 2.5, -2.5, 4503599627370497, 2147483648.5, -2147483649, 4294967301, -1e20];
  const out = Float64Array.from(g, (v, i) => (i % 13 === 0 ? special[(i / 13) % special.length]! : v * 10));
  return dtype === 'float32' ? Float64Array.from(out, Math.fround) : out;
}

function inArena(dtype: ProgramDtype, data: ArrayLike<number>): TensorView {
  const a = arena.array(dtype, data.length) as Float32Array | Float64Array | Int32Array | Uint8Array;
  a.set(data);
  return { data: a, offset: 0, shape: [data.length], stride: [1] };
}

/** The element-i value of each step of `program`, for inputs read by `access`. */
function evaluate(program: ElemwiseProgram, inputs: readonly Float64Array[], access: readonly WasmAccess[], i: number): number {
  const vals = inputs.map((x, k) => (access[k] === 's' ? x[0]! : x[i]!));
  for (const s of program.steps) vals.push(s.op === 'const' ? s.value! : apply(s.op, s.args.map((a) => vals[a]!), s.dtype));
  return vals[vals.length - 1]!;
}


/**
 * Runs `program` on seeded values over inputs read as `access`, in three ranges (the SIMD part
 * and tails of every length), and gives the elements that differ from `evaluate` (at most 3).
 */
function mismatches(program: ElemwiseProgram, access: readonly WasmAccess[], seed: number, n = 1037): string[] {
  const out = valueDtype(program, program.inputs.length + program.steps.length - 1);
  const inputs = access.map((a, k) => values(a === 's' ? 1 : n, seed * 31 + k, program.inputs[k]!));
  const views = inputs.map((x, k): TensorView => {
    const v = inArena(program.inputs[k]!, x);
    return access[k] === 's' ? { ...v, shape: [n], stride: [0] } : v;
  });
  const view = inArena(out, new Float64Array(n));
  const cuts = [0, 1 + (seed % 7), 500 + (seed % 5), n];
  const bad: string[] = [];
  // Blocks beyond a math function's limit (huge arguments of sin) go to the evaluation; only
  // programs of sin, cos or tan may hand any over (the rest must be the loop's own bits).
  let handed = 0;
  const js = (start: number, end: number): void => {
    handed += end - start;
    for (let i = start; i < end; i++) view.data[i] = evaluate(program, inputs, access, i);
  };
  for (let c = 0; c + 1 < cuts.length; c++) if (!runProgram(program, views, view, { start: cuts[c]!, end: cuts[c + 1]! }, js)) bad.push('the wasm loop declined');
  const reduces = program.steps.some((s) => s.op === 'sin' || s.op === 'cos' || s.op === 'tan');
  if (!reduces && handed > 0) bad.push(`${handed} elements handed to the JS loops`);
  if (handed > n / 4) bad.push(`${handed} of ${n} elements handed to the JS loops`);
  for (let i = 0; i < n && bad.length < 3; i++) {
    const want = evaluate(program, inputs, access, i);
    const got = view.data[i]!;
    if (!sameNumber(got, want)) bad.push(`[${i}] ${got} vs ${want} (inputs ${inputs.map((x, k) => x[access[k] === 's' ? 0 : i]).join(', ')})`);
  }
  return bad;
}

/** The layouts to try for `nin` inputs: all contiguous, and a broadcast scalar first or last. */
function layoutsOf(nin: number): WasmAccess[][] {
  const c = (k: number): WasmAccess[] => Array<WasmAccess>(k).fill('c');
  return nin === 1 ? [['c'], ['s']] : [c(nin), ['s', ...c(nin - 1)], [...c(nin - 1), 's']];
}

const describe = (p: ElemwiseProgram): string => `${p.inputs.join(',')} -> ${p.steps.map((s) => `${s.op}:${s.dtype}`).join(', ')}`;

t.test('every float op and dtype, contiguous and broadcast inputs, ranges cut anywhere: the bits of the JS rounding', async (t) => {
  let seed = 1;
  for (const dtype of ['float32', 'float64'] as const) {
    for (const op of Object.keys(ARITY) as ProgramOp[]) {
      const nin = ARITY[op]!;
      for (const access of layoutsOf(nin)) for (const program of programsOf(op, nin, dtype)) t.same(mismatches(program, access, seed++), [], `${describe(program)} ${access.join('')}`);
    }
  }
});

t.test('int32: arithmetic modulo 2^32, bitwise operations, comparisons, where, casts to floats and bools', async (t) => {
  let seed = 500;
  const ops: Array<[ProgramOp, number]> = [['add', 3], ['sub', 2], ['mul', 3], ['neg', 1], ['abs', 1], ['sqr', 1], ['min', 2], ['max', 2], ['clip', 3], ['sign', 1], ['and', 2], ['or', 2], ['xor', 2], ['not', 1], ['where', 3]];
  for (const [op, nin] of ops) for (const access of layoutsOf(nin)) t.same(mismatches(uniform('int32', nin, [{ op, args: [...Array(nin).keys()] }]), access, seed++), [], `${op} ${access.join('')}`);
  for (const op of COMPARISONS) for (const program of programsOf(op, 2, 'int32')) t.same(mismatches(program, ['c', 'c'], seed++), [], describe(program));
  for (const to of ['float32', 'float64', 'bool', 'int32'] as const) {
    const program = uniform('int32', 1, [{ op: 'cast', args: [0], dtype: to }]);
    t.same(mismatches(program, ['c'], seed++), [], describe(program));
  }
});

t.test('bools: logical operations on masks, bool inputs and outputs, casts of any value to bool (NaN is true)', async (t) => {
  let seed = 700;
  for (const [op, nin] of [['and', 2], ['or', 2], ['xor', 2], ['not', 1], ['where', 3]] as Array<[ProgramOp, number]>) {
    for (const access of layoutsOf(nin)) t.same(mismatches(uniform('bool', nin, [{ op, args: [...Array(nin).keys()] }]), access, seed++), [], `${op} ${access.join('')}`);
  }
  for (const from of ['float32', 'float64', 'int32', 'bool'] as const) {
    for (const to of ['float32', 'float64', 'int32', 'bool'] as const) {
      const program = uniform(from, 1, [{ op: 'cast', args: [0], dtype: 'bool' }, { op: 'cast', args: [1], dtype: to }]);
      t.same(mismatches(program, ['c'], seed++), [], describe(program));
      // Straight to the dtype: floats to int32 as JS's x | 0 (wrapped modulo 2^32, NaN and infinities 0).
      const direct = uniform(from, 1, [{ op: 'cast', args: [0], dtype: to }]);
      for (const access of layoutsOf(1)) t.same(mismatches(direct, access, seed++), [], `${describe(direct)} ${access.join('')}`);
    }
  }
});

t.test('mixed dtypes: exact conversions to float64, float64 masks of four-element blocks, a cast to float32', async (t) => {
  let seed = 900;
  const programs: ElemwiseProgram[] = [
    // float32 * int32 in float64 (as the JS loops compute it).
    { inputs: ['float32', 'int32'], steps: [{ op: 'mul', args: [0, 1], dtype: 'float64' }] },
    // where(x < y, x, float64(k)) - k with float64 x, y and int32 k: a float64 mask in a block of four.
    { inputs: ['float64', 'float64', 'int32'], steps: [{ op: 'lt', args: [0, 1], dtype: 'bool' }, { op: 'where', args: [3, 0, 2], dtype: 'float64' }, { op: 'sub', args: [4, 2], dtype: 'float64' }] },
    // A bool input as a condition and as a number, float32 data.
    { inputs: ['bool', 'float32', 'float32'], steps: [{ op: 'where', args: [0, 1, 2], dtype: 'float32' }, { op: 'add', args: [3, 0], dtype: 'float32' }] },
    // float64 comparisons stored as bools, next to int32 values.
    { inputs: ['float64', 'int32'], steps: [{ op: 'ge', args: [0, 1], dtype: 'bool' }, { op: 'not', args: [2], dtype: 'bool' }] },
    // float32 and int32 compared in float64; a float64 result rounded to float32 once.
    { inputs: ['float32', 'int32', 'float64'], steps: [{ op: 'eq', args: [0, 1], dtype: 'bool' }, { op: 'div', args: [2, 1], dtype: 'float64' }, { op: 'where', args: [3, 2, 4], dtype: 'float64' }, { op: 'cast', args: [5], dtype: 'float32' }] },
    // exp of an int32 in float64, a bool output of a float64 test.
    { inputs: ['int32', 'float64'], steps: [{ op: 'cast', args: [0], dtype: 'float64' }, { op: 'exp', args: [2], dtype: 'float64' }, { op: 'gt', args: [3, 1], dtype: 'bool' }] },
  ];
  for (const program of programs) for (const access of layoutsOf(program.inputs.length)) t.same(mismatches(program, access, seed++), [], `${describe(program)} ${access.join('')}`);
});

t.test('sin, cos and tan beyond their reduction limit: those blocks are handed to the JS loops, the same bits', async (t) => {
  const n = 203;
  for (const dtype of ['float32', 'float64'] as const) {
    for (const op of ['sin', 'cos', 'tan'] as const) {
      // exp(x) * sin(y): huge y in a few blocks (and in the tail), NaN and infinities stay in wasm.
      const program = uniform(dtype, 2, [{ op: 'exp', args: [0] }, { op, args: [1] }, { op: 'mul', args: [2, 3] }]);
      const x = values(n, 11, dtype).map((v) => stored(dtype, v / 100));
      const y = values(n, 12, dtype);
      for (const [i, v] of [[5, 1e10], [6, -(2 ** 32)], [40, 1e300], [41, 3e38], [120, 2 ** 32 - 2048], [201, -1e20], [202, 1e15]] as const) y[i] = stored(dtype, v);
      const [vx, vy] = [inArena(dtype, x), inArena(dtype, y)];
      const out = inArena(dtype, new Float64Array(n));
      const handed: number[] = [];
      const js = (start: number, end: number): void => {
        handed.push(start, end);
        for (let i = start; i < end; i++) out.data[i] = evaluate(program, [x, y], ['c', 'c'], i);
      };
      t.ok(runProgram(program, [vx, vy], out, { start: 0, end: 150 }, js) && runProgram(program, [vx, vy], out, { start: 150, end: n }, js));
      let bad = 0;
      for (let i = 0; i < n; i++) if (!sameNumber(out.data[i]!, evaluate(program, [x, y], ['c', 'c'], i))) bad++;
      t.equal(bad, 0, `${dtype} exp(x) * ${op}(y): every element`);
      const block = dtype === 'float32' ? 4 : 2;
      const firsts = handed.filter((_, k) => k % 2 === 0);
      t.ok(handed.every((v, k) => k % 2 === 0 || v - handed[k - 1]! <= block), `${dtype} ${op}: blocks of at most ${block} handed over (${handed.join(' ')})`);
      t.ok([5, 40, 201].every((i) => firsts.some((s) => s <= i && i < s + block)) && !firsts.some((s) => s <= 120 && 120 < s + block), `${dtype} ${op}: the blocks of the huge arguments, not 2^32 - 2048`);
    }
  }
  const program = uniform('float64', 1, [{ op: 'sin', args: [0] }]);
  const x = inArena('float64', [1e10, 1, 2, 3]);
  t.throws(() => runProgram(program, [x], inArena('float64', new Float64Array(4)), undefined), new Error('elemwise-wasm: a block needs the JS loops, and none were given'));
});

t.test('programs that are not exact are refused, with the step and the reason', async (t) => {
  const problem = (p: ElemwiseProgram): string | undefined => programProblem(p, (op) => (isMathFunction(op) ? 1 : undefined));
  t.equal(problem({ inputs: ['float32', 'int32'], steps: [{ op: 'add', args: [0, 1], dtype: 'float32' }] }), 'step 0 (add to float32): float32, int32 do not all convert exactly to float32');
  t.equal(problem({ inputs: ['int32'], steps: [{ op: 'exp', args: [0], dtype: 'int32' }] }), 'step 0 (exp to int32): not an integer operation');
  t.equal(problem({ inputs: ['float32'], steps: [{ op: 'and', args: [0, 0], dtype: 'float32' }] }), 'step 0 (and to float32): logical and bitwise operations are on bools and int32');
  t.equal(problem({ inputs: ['float32'], steps: [{ op: 'sub', args: [0], dtype: 'float32' }] }), 'step 0 (sub to float32): takes 2 arguments, got 1');
  t.equal(problem({ inputs: ['float32'], steps: [{ op: 'neg', args: [1], dtype: 'float32' }] }), 'step 0 (neg to float32): arguments must be earlier values');
  t.equal(problem({ inputs: ['float32'], steps: [{ op: 'lt', args: [0, 0], dtype: 'float32' }] }), 'step 0 (lt to float32): a comparison gives a bool');
  t.equal(problem({ inputs: ['int16' as ProgramDtype], steps: [{ op: 'neg', args: [0], dtype: 'float32' }] }), 'input dtype int16 is not a program dtype');
  t.equal(problem({ inputs: ['float32'], steps: [] }), 'a program needs at least one step');
  t.notOk(isRunnable({ inputs: ['bool'], steps: [{ op: 'add', args: [0, 0], dtype: 'bool' }] }), 'arithmetic on bools stays in the JS loops');
  t.throws(() => loopModuleBytes({ inputs: ['float32'], steps: [{ op: 'exp', args: [0], dtype: 'int32' }] }, ['c']), new RangeError('elemwise program: step 0 (exp to int32): not an integer operation'));
});

t.test('a fused program: steps reading inputs and earlier steps, several times', async (t) => {
  const n = 999;
  for (const dtype of ['float32', 'float64'] as const) {
    // ((x * y + w) / max(x, w)) - sqrt(abs(x * y + w))
    const program = uniform(dtype, 3, [
      { op: 'mul', args: [0, 1] },
      { op: 'add', args: [3, 2] },
      { op: 'max', args: [0, 2] },
      { op: 'div', args: [4, 5] },
      { op: 'abs', args: [4] },
      { op: 'sqrt', args: [7] },
      { op: 'sub', args: [6, 8] },
    ]);
    t.same(mismatches(program, ['c', 'c', 'c'], 40, n), [], `${dtype}: every element`);
  }
});

t.test('constants: numbers of every dtype (-0, NaN, extremes), bool masks, in the block and the tail', async (t) => {
  for (const dtype of ['float32', 'float64'] as const) {
    for (const c of [1, -0, NaN, -Infinity, 0.5, dtype === 'float32' ? Math.fround(0.1) : 0.1]) {
      // x * c + c, and c alone stored where x > c
      const program = uniform(dtype, 1, [
        { op: 'const', args: [], value: c },
        { op: 'mul', args: [0, 1] },
        { op: 'add', args: [2, 1] },
        { op: 'gt', args: [0, 1], dtype: 'bool' },
        { op: 'where', args: [4, 1, 3] },
      ]);
      for (const access of layoutsOf(1)) t.same(mismatches(program, access, 41), [], `${dtype} const ${c}, ${access}`);
    }
  }
  for (const c of [7, -2147483648, 2147483647, 0]) {
    const program = uniform('int32', 1, [{ op: 'const', args: [], value: c }, { op: 'mul', args: [0, 1] }, { op: 'xor', args: [2, 1] }]);
    t.same(mismatches(program, ['c'], 42), [], `int32 const ${c}`);
  }
  for (const c of [0, 1]) {
    const program = uniform('bool', 1, [{ op: 'const', args: [], value: c }, { op: 'xor', args: [0, 1] }]);
    t.same(mismatches(program, ['c'], 43), [], `bool const ${c}`);
    // A bool constant used as a float64 number (four-element blocks of two i64x2 masks).
    const mixed: ElemwiseProgram = { inputs: ['float32'], steps: [{ op: 'const', args: [], dtype: 'bool', value: c }, { op: 'cast', args: [0], dtype: 'float64' }, { op: 'add', args: [1, 2], dtype: 'float64' }] };
    t.same(mismatches(mixed, ['c'], 44), [], `bool const ${c} as a float64`);
  }
  const problem = (steps: ProgramStep[]): string | undefined => programProblem({ inputs: ['float32'], steps }, () => undefined);
  t.equal(problem([{ op: 'const', args: [], dtype: 'float32', value: 0.1 }]), 'step 0 (const to float32): 0.1 is not a float32 value');
  t.equal(problem([{ op: 'const', args: [], dtype: 'int32', value: 2 ** 31 }]), 'step 0 (const to int32): 2147483648 is not an int32 value');
  t.equal(problem([{ op: 'const', args: [], dtype: 'bool', value: 2 }]), 'step 0 (const to bool): 2 is not a bool value');
  t.equal(problem([{ op: 'const', args: [], dtype: 'float64' }]), 'step 0 (const to float64): a constant needs a number value');
  t.equal(problem([{ op: 'const', args: [0], dtype: 'float64', value: 1 }]), 'step 0 (const to float64): takes 0 arguments, got 1');
});

t.test('layouts the loops decline: the JS loops run instead', async (t) => {
  const program = uniform('float32', 2, [{ op: 'add', args: [0, 1] }]);
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
      ['sin(x * 1e9) + cos(y) * tan(w) - arctan2(x, y)', pt.sin(x.mul(1e9)).add(pt.cos(y).mul(pt.tan(w))).sub(pt.arctan2(x, y))],
      ['|x| ** y + 3 ** w', pt.pow(pt.abs(x), y).add(pt.pow(3, w))],
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
        for (let i = 0; i < n; i++) if (!sameNumber(got.data[i]!, want[0]!.data[i]!)) bad++;
        t.equal(bad, 0, `${dtype} ${what}, workers ${workers}: equal bits`);
      }
    }
  }
});

t.test('compiled functions on int32 and bool values: the bits of the reference executor, on 0 and 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const i = pt.vector('i', 'int32');
  const j = pt.vector('j', 'int32');
  const x = pt.vector('x', 'float32');
  const graphs: Array<[string, weft.TensorVariable]> = [
    ['(i * j + 7) ^ (i & j)', pt.xor(i.mul(j).add(7), pt.and(i, j))],
    ['i > j and x < 0 (a bool output)', pt.and(i.gt(j), x.lt(0))],
    ['where(i < 0, x, -x) * 2', pt.where(i.lt(0), x, x.neg()).mul(2)],
    ['max(i, j) - abs(i) + float32(i != j)', pt.maximum(i, j).sub(pt.abs(i)).add(pt.cast(i.neq(j), 'int32'))],
    ['x * i (float64)', x.mul(i)],
  ];
  const n = 1 << 16;
  const ints = [1, 2].map((s) => Int32Array.from(values(n, 300 + s, 'int32')));
  const floats = Float32Array.from(values(n, 303, 'float32'));
  for (const [what, z] of graphs) {
    const reference = new ReferenceExecutor(new weft.FunctionGraph([i, j, x], [z]));
    const want = reference.run([weft.ndarray(ints[0]!), weft.ndarray(ints[1]!), weft.ndarray(floats)]) as weft.NdArray[];
    for (const workers of [0, 2]) {
      const fn = await weft.compile([i, j, x], z, { pool, workers, onUnusedInput: 'ignore' });
      const got = await fn(ints[0]!, ints[1]!, floats);
      t.equal(got.dtype, want[0]!.dtype, `${what}: ${got.dtype}`);
      let bad = 0;
      for (let k = 0; k < n; k++) if (!sameNumber(got.data[k]!, want[0]!.data[k]!)) bad++;
      t.equal(bad, 0, `${what}, workers ${workers}: equal bits`);
    }
  }
});

t.test('bias rows and repeated elements (blocks of 64 or more): row by row, ranges cut inside rows', async (t) => {
  const [rows, cols] = [7, 100];
  const n = rows * cols;
  for (const dtype of ['float32', 'float64'] as const) {
    // (x + row) * column: x contiguous, row repeated along axis 0, column repeated along axis 1.
    const program = uniform(dtype, 3, [{ op: 'add', args: [0, 1] }, { op: 'mul', args: [3, 2] }]);
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
      if (!sameNumber(out.data[i]!, want)) bad++;
    }
    t.equal(bad, 0, `${dtype}: every element`);
  }
});

/** Element i (C order over `shape`) of a view. */
function elementOf(v: TensorView, shape: readonly number[], i: number): number {
  let e = v.offset;
  for (let a = shape.length - 1; a >= 0; a--) {
    e += (i % shape[a]!) * v.stride[a]!;
    i = Math.floor(i / shape[a]!);
  }
  return v.data[e]!;
}

t.test('strided inputs (transposed, every other element, reversed, a broadcast column): row by row, gathered lanes', async (t) => {
  const [rows, cols] = [9, 70];
  const n = rows * cols;
  let seed = 1200;
  const programs: ElemwiseProgram[] = [
    uniform('float32', 3, [{ op: 'mul', args: [0, 1] }, { op: 'sub', args: [3, 2] }]),
    uniform('float64', 3, [{ op: 'exp', args: [0] }, { op: 'mul', args: [3, 1] }, { op: 'add', args: [4, 2] }]),
    uniform('int32', 3, [{ op: 'xor', args: [0, 1] }, { op: 'add', args: [3, 2] }]),
    { inputs: ['bool', 'float32', 'float32'], steps: [{ op: 'where', args: [0, 1, 2], dtype: 'float32' }] },
    { inputs: ['float64', 'float64', 'float64'], steps: [{ op: 'lt', args: [0, 1], dtype: 'bool' }, { op: 'xor', args: [3, 3], dtype: 'bool' }, { op: 'or', args: [4, 3], dtype: 'bool' }] },
  ];
  for (const program of programs) {
    const dtypes = program.inputs;
    // Storage of 2n (+ slack) per input; views of it in four layouts, cycled over the inputs.
    const data = dtypes.map((d, k) => inArena(d, values(2 * n + 8, seed++ + k, d)).data);
    const layouts = (k: number): Array<[string, TensorView]> => [
      ['transposed', { data: data[k]!, offset: 0, shape: [rows, cols], stride: [1, rows] }],
      ['every other', { data: data[k]!, offset: 1, shape: [rows, cols], stride: [2 * cols, 2] }],
      ['reversed', { data: data[k]!, offset: 2 * n - 1, shape: [rows, cols], stride: [-cols, -1] }],
      ['column', { data: data[k]!, offset: 3, shape: [rows, cols], stride: [1, 0] }],
      ['contiguous', { data: data[k]!, offset: 5, shape: [rows, cols], stride: [cols, 1] }],
    ];
    for (let shift = 0; shift < 5; shift++) {
      const views = dtypes.map((_, k) => layouts(k)[(k + shift) % 5]!);
      const d = valueDtype(program, program.inputs.length + program.steps.length - 1);
      const out = { ...inArena(d, new Float64Array(n)), shape: [rows, cols], stride: [cols, 1] };
      const ranges = [[0, 33], [33, 500], [500, n]] as const;
      for (const [start, end] of ranges) t.ok(runProgram(program, views.map((v) => v[1]), out, { start, end }), `wasm ran on [${start}, ${end})`);
      let bad = 0;
      for (let i = 0; i < n; i++) {
        const inputs = views.map(([, v]) => Float64Array.of(elementOf(v, [rows, cols], i)));
        if (!sameNumber(out.data[i]!, evaluate(program, inputs, views.map(() => 's'), 0))) bad++;
      }
      t.equal(bad, 0, `${describe(program)} over ${views.map((v) => v[0]).join(', ')}: every element`);
    }
  }
  const program = uniform('float32', 1, [{ op: 'neg', args: [0] }]);
  const x = inArena('float32', values(200, 5, 'float32'));
  t.notOk(runProgram(program, [{ ...x, shape: [100, 2], stride: [1, 100] }], { ...inArena('float32', new Float64Array(200)), shape: [100, 2], stride: [2, 1] }, undefined), 'rows of 2: the JS loop');
});

t.test("an output outside the memory (a call's fresh array) is staged in the thread's block and copied out", async (t) => {
  const n = 50_000; // several pieces of the 64 KiB block
  for (const dtype of ['float32', 'float64'] as const) {
    const program = uniform(dtype, 2, [{ op: 'exp', args: [0] }, { op: 'mul', args: [2, 1] }]);
    const round = dtype === 'float32' ? Math.fround : (v: number) => v;
    const [x, y] = [values(n, 95, dtype).map((v) => round(v / 100)), values(n, 96, dtype)];
    const out: TensorView = { data: new ARRAY[dtype](n + 3), offset: 3, shape: [n], stride: [1] };
    for (const [start, end] of [[0, 1001], [1001, n]] as const) t.ok(runProgram(program, [inArena(dtype, x), inArena(dtype, y)], out, { start, end }));
    let bad = 0;
    for (let i = 0; i < n; i++) if (!sameNumber(out.data[3 + i]!, apply('mul', [apply('exp', [x[i]!], dtype), y[i]!], dtype))) bad++;
    t.equal(bad, 0, `${dtype}: every element`);
    t.equal(out.data[2], 0, 'nothing written before the view');
  }
});
