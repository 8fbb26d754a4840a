// A table-driven tester for element-wise ops, after Theano's makeBroadcastTester: an op gets good
// cases (values checked against an expectation computed element by element in plain JS with
// NumPy broadcasting, and the output dtype), bad build and bad runtime cases with their exact
// errors, and gradient cases (verifyGrad and checkRop). Good cases also run with transposed
// inputs (the strided kernel path) and through checkInferShape.
import type { Test } from 'tap';
import { STORAGE, type Dtype } from '../src/kernels/dtype.js';
import { makeNdArray } from '../src/tensor/core/ndarray.js';
import { pt, throwsExactly, weft } from './helpers.js';

type TensorVariable = weft.pt.TensorVariable;

/** One input value: its dtype, shape and elements in C order (as the op will see them). */
export interface Arg {
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  readonly values: readonly number[];
}

export type Nested = number | boolean | readonly Nested[];

function nestedShape(x: Nested): number[] {
  const s: number[] = [];
  let v: Nested = x;
  while (Array.isArray(v)) {
    s.push(v.length);
    v = (v as readonly Nested[])[0] ?? 0;
  }
  return s;
}

/** Rounds or wraps numbers as storing them in `dtype` does (bool: non-zero is 1). */
export function stored(dtype: Dtype, values: readonly (number | boolean)[]): number[] {
  const data = new STORAGE[dtype](values.length);
  values.forEach((v, i) => {
    data[i] = dtype === 'bool' ? (v !== 0 && v !== false ? 1 : 0) : Number(v);
  });
  return Array.from(data);
}

/** An input of `dtype` from a nested array (or a number for 0-d). */
export function arr(dtype: Dtype, value: Nested): Arg {
  const flat = Array.isArray(value) ? (value as readonly Nested[]).flat(Infinity as 1) as (number | boolean)[] : [value as number];
  return { dtype, shape: nestedShape(value), values: stored(dtype, flat) };
}

/** Seeded uniform values in [low, high) (integers for integer dtypes, 0 or 1 for bool). */
export function uniform(rng: weft.Rng, dtype: Dtype, shape: readonly number[], low: number, high: number): Arg {
  const n = shape.reduce((p, d) => p * d, 1);
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const u = rng.random();
    if (dtype === 'bool') values.push(u < 0.5 ? 0 : 1);
    else if (dtype === 'float32' || dtype === 'float64') values.push(low + (high - low) * u);
    else values.push(Math.ceil(low) + Math.floor(u * (Math.floor(high) - Math.ceil(low) + 1)));
  }
  return { dtype, shape, values: stored(dtype, values) };
}

export function toNdArray(a: Arg): weft.NdArray {
  const data = new STORAGE[a.dtype](a.values.length);
  data.set(a.values);
  return makeNdArray(data, a.shape);
}

/** A variable for values like `a` (axes of length 1 broadcastable, as in Theano's testers). */
export function variableFor(a: Arg, name: string): TensorVariable {
  return pt.tensor({ dtype: a.dtype, shape: a.shape.map((d) => (d === 1 ? 1 : null)), name });
}

/** The same values with their axes reversed, stored contiguously in that order. */
function reversedAxes(a: Arg): Arg {
  const shape = [...a.shape].reverse();
  const nd = shape.length;
  const n = a.values.length;
  const values = new Array<number>(n);
  const strides = new Array<number>(nd);
  let acc = 1;
  for (let k = nd - 1; k >= 0; k--) {
    strides[k] = acc;
    acc *= a.shape[k]!;
  }
  const idx = new Array<number>(nd).fill(0);
  for (let i = 0; i < n; i++) {
    // idx runs over the reversed shape in C order; the source index is idx reversed.
    let src = 0;
    for (let k = 0; k < nd; k++) src += idx[k]! * strides[nd - 1 - k]!;
    values[i] = a.values[src]!;
    for (let k = nd - 1; k >= 0; k--) {
      if (++idx[k]! < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return { dtype: a.dtype, shape, values };
}

/** NumPy's broadcast shape of these shapes (leading axes added to the shorter ones). */
export function broadcastShape(shapes: readonly (readonly number[])[]): number[] {
  const nd = Math.max(0, ...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let a = 0; a < nd; a++) {
    let len = 1;
    for (const s of shapes) {
      const d = s[a - (nd - s.length)] ?? 1;
      if (d !== 1) {
        if (len !== 1 && len !== d) throw new Error(`test case: shapes ${JSON.stringify(shapes)} do not broadcast`);
        len = d;
      }
    }
    out.push(len);
  }
  return out;
}

export type Expectation = (xs: readonly number[], out: Dtype) => number | boolean;

/** `f` applied to the broadcast elements of `args`, stored as `dtype`. */
export function expectedValues(f: Expectation, args: readonly Arg[], dtype: Dtype): { shape: number[]; values: number[] } {
  const shape = broadcastShape(args.map((a) => a.shape));
  const nd = shape.length;
  const n = shape.reduce((p, d) => p * d, 1);
  const results: (number | boolean)[] = [];
  const idx = new Array<number>(nd).fill(0);
  for (let i = 0; i < n; i++) {
    const xs = args.map((a) => {
      let pos = 0;
      let stride = 1;
      for (let k = a.shape.length - 1; k >= 0; k--) {
        const d = a.shape[k]!;
        if (d !== 1) pos += idx[k + nd - a.shape.length]! * stride;
        stride *= d;
      }
      return a.values[pos]!;
    });
    results.push(f(xs, dtype));
    for (let k = nd - 1; k >= 0; k--) {
      if (++idx[k]! < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return { shape, values: stored(dtype, results) };
}

function flat(nd: weft.NdArray): number[] {
  const l = weft.tolist(nd);
  return Array.isArray(l) ? (l.flat(Infinity as 1) as number[]) : [l];
}

/**
 * Checks `got` against `want`: NaN where NaN is expected, otherwise equal, or within `tol`
 * relative (plus `absTol`) when a tolerance is given.
 */
export function checkValues(t: Test, got: weft.NdArray, want: { shape: number[]; values: number[] }, tol = 0, absTol = 0, msg = 'values', inputs?: readonly Arg[]): void {
  t.same(got.shape, want.shape, `${msg}: shape`);
  const g = flat(got);
  const bad: string[] = [];
  want.values.forEach((w, i) => {
    const v = g[i]!;
    const ok = Number.isNaN(w) ? Number.isNaN(v) : v === w || Math.abs(v - w) <= tol * Math.abs(w) + absTol;
    if (!ok && bad.length < 5) {
      const at = inputs && inputs.every((a) => a.values.length === want.values.length) ? ` at (${inputs.map((a) => a.values[i]).join(', ')})` : '';
      bad.push(`[${i}]${at}: got ${v}, expected ${w}`);
    }
  });
  t.same(bad, [], `${msg}${tol || absTol ? ` within ${tol || absTol}` : ' (exact)'}`);
}

export interface GoodCase {
  readonly args: readonly Arg[];
  /** The output dtype. */
  readonly dtype: Dtype;
  /** Relative tolerance for this case (the tester's tol by default). */
  readonly tol?: number;
}

export interface BadCase {
  readonly args: readonly Arg[];
  readonly error: abstract new (...args: never[]) => Error;
  readonly message: string;
}

export interface TesterSpec {
  readonly op: (...xs: TensorVariable[]) => TensorVariable;
  /** The value of one element from the input elements (plain JS on the numbers). */
  readonly expected: Expectation;
  readonly good?: Readonly<Record<string, GoodCase>>;
  /** Relative tolerance of float results (default 0: the results must be identical). */
  readonly tol?: number;
  /** Relative tolerance of float32 results (default: tol). */
  readonly tol32?: number;
  readonly absTol?: number;
  /** Cases whose graph cannot be built, with the exact error. */
  readonly badBuild?: Readonly<Record<string, BadCase>>;
  /** Cases that build but fail when run, with the exact error. */
  readonly badRuntime?: Readonly<Record<string, BadCase>>;
  /** Float points where verifyGrad and checkRop must pass. */
  readonly grad?: Readonly<Record<string, readonly Arg[]>>;
  readonly gradOptions?: weft.VerifyGradOptions;
  readonly ropOptions?: weft.CheckRopOptions;
  /** Run checkInferShape on good cases (default true). */
  readonly inferShape?: boolean;
}

async function runGood(t: Test, spec: TesterSpec, c: GoodCase): Promise<void> {
  const vars = c.args.map((a, i) => variableFor(a, `x${i}`));
  const out = spec.op(...vars);
  t.equal(out.dtype, c.dtype, 'output dtype');
  const want = expectedValues(spec.expected, c.args, c.dtype);
  const tol = c.tol ?? (c.dtype === 'float32' ? spec.tol32 : undefined) ?? spec.tol ?? 0;
  const values = c.args.map(toNdArray);
  const got = await (await weft.compile(vars, out))(...values);
  checkValues(t, got, want, tol, spec.absTol ?? 0, 'values', c.args);

  // The same values laid out with reversed axes and transposed back in the graph: the op sees
  // non-contiguous inputs and runs the strided loop; its results must be the very same.
  if (c.args.some((a) => a.shape.length >= 2)) {
    const flipped = c.args.map((a) => (a.shape.length >= 2 ? reversedAxes(a) : a));
    const fvars = flipped.map((a, i) => variableFor(a, `y${i}`));
    const fout = spec.op(...fvars.map((v, i) => (c.args[i]!.shape.length >= 2 ? v.T : v)));
    const fgot = await (await weft.compile(fvars, fout))(...flipped.map(toNdArray));
    t.same(flat(fgot), flat(got), 'non-contiguous inputs give identical results');
  }
  if (spec.inferShape !== false && out.ndim > 0) {
    t.ok((await weft.checkInferShape(vars, [out], values)) >= 1, 'inferShape');
  }
}

export function makeBroadcastTester(spec: TesterSpec): (t: Test) => Promise<void> {
  return async (t) => {
    for (const [name, c] of Object.entries(spec.good ?? {})) {
      await t.test(`good: ${name}`, (t) => runGood(t, spec, c));
    }
    for (const [name, c] of Object.entries(spec.badBuild ?? {})) {
      await t.test(`bad build: ${name}`, async (t) => {
        const vars = c.args.map((a, i) => variableFor(a, `x${i}`));
        await throwsExactly(t, () => spec.op(...vars), c.error, c.message);
      });
    }
    for (const [name, c] of Object.entries(spec.badRuntime ?? {})) {
      await t.test(`bad runtime: ${name}`, async (t) => {
        const vars = c.args.map((a, i) => variableFor(a, `x${i}`));
        const fn = await weft.compile(vars, spec.op(...vars));
        await throwsExactly(t, () => fn(...c.args.map(toNdArray)), c.error, c.message);
      });
    }
    for (const [name, args] of Object.entries(spec.grad ?? {})) {
      await t.test(`grad: ${name}`, async (t) => {
        const points = args.map(toNdArray);
        await weft.verifyGrad(spec.op, points, spec.gradOptions);
        t.pass('verifyGrad');
        await weft.checkRop(spec.op, points, spec.ropOptions);
        t.pass('checkRop');
      });
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Expected dtypes, from NumPy's result_type for weft's dtypes (int64 results read as float64,
// weft's stand-in for them), written out rather than computed by weft.

const ORDER: readonly Dtype[] = ['bool', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float32', 'float64'];
const RESULT_TABLE: Readonly<Record<Dtype, readonly Dtype[]>> = {
  bool: ['bool', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float32', 'float64'],
  int8: ['int8', 'int8', 'int16', 'int16', 'int32', 'int32', 'float64', 'float32', 'float64'],
  uint8: ['uint8', 'int16', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float32', 'float64'],
  int16: ['int16', 'int16', 'int16', 'int16', 'int32', 'int32', 'float64', 'float32', 'float64'],
  uint16: ['uint16', 'int32', 'uint16', 'int32', 'uint16', 'int32', 'uint32', 'float32', 'float64'],
  int32: ['int32', 'int32', 'int32', 'int32', 'int32', 'int32', 'float64', 'float64', 'float64'],
  uint32: ['uint32', 'float64', 'uint32', 'float64', 'uint32', 'float64', 'uint32', 'float64', 'float64'],
  float32: ['float32', 'float32', 'float32', 'float32', 'float32', 'float64', 'float64', 'float32', 'float64'],
  float64: ['float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64'],
};

export function resultType(ds: readonly Dtype[]): Dtype {
  return ds.reduce((a, b) => RESULT_TABLE[a][ORDER.indexOf(b)]!);
}

export const isFloat = (d: Dtype): boolean => d === 'float32' || d === 'float64';

/** Expected-dtype rules of the op families. */
export const dtypeRules = {
  /** Arithmetic: NumPy's, with bool arithmetic in int8 (True + True is 2). */
  arith: (ds: readonly Dtype[]): Dtype => {
    const d = resultType(ds);
    return d === 'bool' ? 'int8' : d;
  },
  /** maximum, minimum, clip, where, abs, floor, ceil, round, bitwise: NumPy's. */
  numpy: resultType,
  trueDiv: (ds: readonly Dtype[]): Dtype => {
    const d = resultType(ds);
    return isFloat(d) ? d : 'float64';
  },
  /** Transcendental functions: floats stay; integers of 16 bits or less and bool give float32. */
  float: (ds: readonly Dtype[]): Dtype => {
    const d = resultType(ds);
    if (isFloat(d)) return d;
    return ['bool', 'int8', 'uint8', 'int16', 'uint16'].includes(d) ? 'float32' : 'float64';
  },
  bool: (): Dtype => 'bool',
};

/**
 * Theano's standard good cases for an op of `nin` inputs: equal shapes, rank padding, broadcast
 * scalars, rows and columns, 0-d, empty arrays, float32, and the integer dtypes in `ints` (with
 * values from `gen`, which gets the input index, so each input can have its own domain).
 */
export function standardCases(
  nin: number,
  gen: (i: number, dtype: Dtype, shape: readonly number[]) => Arg,
  rule: (ds: readonly Dtype[]) => Dtype,
  options: { ints?: readonly Dtype[]; floats?: readonly Dtype[] } = {},
): Record<string, GoodCase> {
  const cases: Record<string, GoodCase> = {};
  const make = (dtypes: readonly Dtype[], shapes: readonly (readonly number[])[]): GoodCase => {
    const args = shapes.map((s, i) => gen(i, dtypes[i] ?? dtypes[0]!, s));
    return { args, dtype: rule(args.map((a) => a.dtype)) };
  };
  const all = (s: readonly number[]): (readonly number[])[] => Array<readonly number[]>(nin).fill(s);
  const last = (first: readonly number[], other: readonly number[]): (readonly number[])[] => [
    ...Array<readonly number[]>(nin - 1).fill(first),
    other,
  ];
  const f64: Dtype[] = ['float64'];
  cases.same_shapes = make(f64, all([2, 3]));
  cases.tensor3 = make(f64, all([2, 3, 4]));
  cases.zero_d = make(f64, all([]));
  cases.empty = make(f64, all([0, 3]));
  if (nin > 1) {
    cases.not_same_dimensions = make(f64, last([2, 2], [2]));
    cases.scalar = make(f64, last([2, 3], [1, 1]));
    cases.row = make(f64, last([2, 3], [1, 3]));
    cases.column = make(f64, last([2, 3], [2, 1]));
    cases.with_zero_d = make(f64, last([2, 3], []));
    cases.empty_with_one = make(f64, last([0], [1]));
    cases.first_broadcast = make(f64, [[1, 3], ...Array<readonly number[]>(nin - 1).fill([2, 3])]);
  }
  for (const d of options.floats ?? ['float32']) cases[d] = make([d], all([2, 3]));
  for (const d of options.ints ?? []) {
    cases[d] = make([d], all([2, 3]));
    if (nin > 1) cases[`float64_${d}`] = make(['float64', d], last([2, 3], [2, 3]));
  }
  return cases;
}

const UNSIGNED: readonly Dtype[] = ['bool', 'uint8', 'uint16', 'uint32'];

/**
 * A value generator for standardCases: input i takes uniform values in ranges[i] (the last
 * range for later inputs), clamped at 0 for unsigned dtypes; inputs listed in `nonzero` get 1
 * in place of 0 (divisors).
 */
export function domain(
  rng: weft.Rng,
  ranges: readonly (readonly [number, number])[],
  options: { nonzero?: readonly number[] } = {},
): (i: number, dtype: Dtype, shape: readonly number[]) => Arg {
  return (i, dtype, shape) => {
    const [lo, hi] = ranges[Math.min(i, ranges.length - 1)]!;
    const low = UNSIGNED.includes(dtype) ? Math.max(0, lo) : lo;
    const a = uniform(rng, dtype, shape, low, Math.max(low, hi));
    if (!options.nonzero?.includes(i)) return a;
    return { ...a, values: a.values.map((v) => (v === 0 ? 1 : v)) };
  };
}

/** Theano's gradient cases: equal shapes, broadcast scalar, row and column, 0-d, and float32. */
export function gradCases(
  nin: number,
  gen: (i: number, dtype: Dtype, shape: readonly number[]) => Arg,
): Record<string, readonly Arg[]> {
  const make = (dtype: Dtype, shapes: readonly (readonly number[])[]): Arg[] => shapes.map((s, i) => gen(i, dtype, s));
  const all = (s: readonly number[]): (readonly number[])[] => Array<readonly number[]>(nin).fill(s);
  const last = (other: readonly number[]): (readonly number[])[] => [...Array<readonly number[]>(nin - 1).fill([2, 3]), other];
  const cases: Record<string, readonly Arg[]> = { same_shapes: make('float64', all([2, 3])), zero_d: make('float64', all([])) };
  if (nin > 1) {
    cases.scalar = make('float64', last([1, 1]));
    cases.row = make('float64', last([1, 3]));
    cases.column = make('float64', last([2, 1]));
  }
  cases.float32 = make('float32', all([2, 3]));
  return cases;
}
