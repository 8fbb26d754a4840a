// makeTester and makeBroadcastTester (PyTensor's, for users' ops): a table of cases becomes
// checks that any test runner can run: good inputs give the expected values (on the calling
// thread, and with a pool the same bits on the workers) and shapes that inferShape predicts;
// bad inputs fail to build, or fail when run, with the expected error; gradient points pass
// verifyGrad and Rop points pass checkRop. Each case throws a CheckError saying what went wrong.
import { isFloatDtype } from '../kernels/dtype.js';
import { ioToposort } from '../graph/traversal.js';
import { flatValues, makeNdArray, ndarrayDtype, shapeText, type NdArray } from '../tensor/core/ndarray.js';
import { TensorType } from '../tensor/core/type.js';
import type { TensorLike, TensorVariable } from '../tensor/core/variable.js';
import { compile, type InputValue } from './function.js';
import type { Pool } from './pool.js';
import { CheckError, checkInferShape, checkRop, type CheckRopOptions } from './testing.js';
import { verifyGrad, type VerifyGradOptions } from './verify-grad.js';

/** A case that must fail: its inputs and the error (its exact message, or a pattern). */
export interface FailingCase {
  readonly inputs: readonly NdArray[];
  readonly error: string | RegExp;
}

export interface OpTesterSpec {
  /** Names the tester in case names and messages. */
  readonly name: string;
  /** The op applied to symbolic inputs (one per value of a case, of its dtype and rank). */
  readonly op: (...xs: TensorVariable[]) => TensorVariable;
  /** The expected output from the input values, computed independently (plain JS, say). */
  readonly expected: (...xs: NdArray[]) => TensorLike;
  /** Inputs (as ndarrays: their dtypes and ranks make the symbolic inputs) that must work. */
  readonly good?: Readonly<Record<string, readonly NdArray[]>>;
  /** Inputs whose graph must not build (static shapes or dtypes the op refuses). */
  readonly badBuild?: Readonly<Record<string, FailingCase>>;
  /** Inputs that build (lengths unknown) but must fail when the function runs. */
  readonly badRuntime?: Readonly<Record<string, FailingCase>>;
  /** Float points where verifyGrad must pass. */
  readonly grad?: Readonly<Record<string, readonly NdArray[]>>;
  /** Float points where checkRop must pass. */
  readonly rop?: Readonly<Record<string, readonly NdArray[]>>;
  /** Relative tolerance of float results (default 1e-12 for float64, 1e-6 for float32; integers exact). */
  readonly tol?: number;
  /** With a pool, good cases also run on its workers and must give the calling thread's bits. */
  readonly pool?: Pool;
  /** Check inferShape on good cases (default true). */
  readonly inferShape?: boolean;
  readonly gradOptions?: VerifyGradOptions;
  readonly ropOptions?: CheckRopOptions;
}

export interface TesterCase {
  /** `<tester> <kind> <case>`, e.g. "add good scalars". */
  readonly name: string;
  run(): Promise<void>;
}

export interface OpTester {
  readonly cases: readonly TesterCase[];
  /** Runs every case; throws a CheckError listing the cases that failed. */
  run(): Promise<void>;
}

/** Symbolic inputs for these values: their dtypes, and their ranks (length-1 axes broadcastable, as Theano's testers make them). */
function variablesFor(values: readonly NdArray[], lengths: 'static' | 'unknown'): TensorVariable[] {
  return values.map((v, i) => {
    const dtype = ndarrayDtype(v, `makeTester: input ${i}`);
    if (!dtype) throw new TypeError(`makeTester: input ${i} is an ndarray over a plain JS array; give typed arrays (their dtype makes the input)`);
    const shape = v.shape.map((d) => (lengths === 'static' ? d : d === 1 ? 1 : null));
    return new TensorType(dtype, shape).makeVariable(`x${i}`) as TensorVariable;
  });
}

function matches(e: unknown, error: string | RegExp): boolean {
  const message = e instanceof Error ? e.message : String(e);
  return typeof error === 'string' ? message === error : error.test(message);
}

function describeError(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/** Compares `got` with `want` (values of `want`'s dtype) within `tol`, naming the first differences. */
function compareValues(where: string, got: NdArray, want: NdArray, tol: number): void {
  if (shapeText(got.shape) !== shapeText(want.shape)) throw new CheckError(`${where}: the output has shape ${shapeText(got.shape)}, expected ${shapeText(want.shape)}`);
  const g = flatValues(got);
  const w = flatValues(want);
  const bad: string[] = [];
  for (let i = 0; i < w.length && bad.length < 3; i++) {
    const [a, b] = [Number(g[i]), Number(w[i])];
    const ok = Number.isNaN(b) ? Number.isNaN(a) : a === b || Math.abs(a - b) <= tol * Math.max(Math.abs(a), Math.abs(b));
    if (!ok) bad.push(`[${i}] ${a} (expected ${b})`);
  }
  if (bad.length > 0) throw new CheckError(`${where}: ${bad.join(', ')}${tol > 0 ? ` (relative tolerance ${tol})` : ''}`);
}

/** The expected value as an ndarray of the output's dtype. */
function asExpected(value: TensorLike, like: TensorVariable): NdArray {
  return like.type.filter(value, { allowDowncast: true, what: 'the expected value' });
}

export function makeTester(spec: OpTesterSpec): OpTester {
  const cases: TesterCase[] = [];
  const named = (kind: string, name: string, run: () => Promise<void>): void => void cases.push({ name: `${spec.name} ${kind} ${name}`, run });

  for (const [name, inputs] of Object.entries(spec.good ?? {})) {
    named('good', name, async () => {
      const where = `${spec.name} good ${name}`;
      const xs = variablesFor(inputs, 'unknown');
      const out = spec.op(...xs);
      const fn = await compile(xs, out, { onUnusedInput: 'ignore', workers: 0, name: where });
      const got = await fn(...(inputs as InputValue[]));
      const want = asExpected(spec.expected(...inputs), out);
      const tol = spec.tol ?? (isFloatDtype(out.dtype) ? (out.dtype === 'float32' ? 1e-6 : 1e-12) : 0);
      compareValues(where, got, want, tol);
      if (spec.pool) {
        const onWorkers = await compile(xs, out, { onUnusedInput: 'ignore', pool: spec.pool, name: `${where} (pool)` });
        const pooled = await onWorkers(...(inputs as InputValue[]));
        compareValues(`${where} on the pool (bits of the calling thread)`, pooled, got, 0);
      }
      if (spec.inferShape !== false) {
        const nodes = ioToposort(xs, [out]);
        if (nodes.some((n) => n.op.inferShape)) await checkInferShape(xs, [out], inputs);
      }
    });
  }
  for (const [name, c] of Object.entries(spec.badBuild ?? {})) {
    named('badBuild', name, async () => {
      const where = `${spec.name} badBuild ${name}`;
      try {
        spec.op(...variablesFor(c.inputs, 'static'));
      } catch (e) {
        if (matches(e, c.error)) return;
        throw new CheckError(`${where}: building failed with ${describeError(e)}, expected ${String(c.error)}`);
      }
      throw new CheckError(`${where}: the graph was built; expected it to fail with ${String(c.error)}`);
    });
  }
  for (const [name, c] of Object.entries(spec.badRuntime ?? {})) {
    named('badRuntime', name, async () => {
      const where = `${spec.name} badRuntime ${name}`;
      const xs = variablesFor(c.inputs, 'unknown');
      const fn = await compile(xs, spec.op(...xs), { onUnusedInput: 'ignore', workers: 0, name: where });
      try {
        await fn(...(c.inputs as InputValue[]));
      } catch (e) {
        if (matches(e, c.error)) return;
        throw new CheckError(`${where}: the call failed with ${describeError(e)}, expected ${String(c.error)}`);
      }
      throw new CheckError(`${where}: the call succeeded; expected it to fail with ${String(c.error)}`);
    });
  }
  for (const [name, points] of Object.entries(spec.grad ?? {})) {
    named('grad', name, () => verifyGrad(spec.op, points, spec.gradOptions));
  }
  for (const [name, points] of Object.entries(spec.rop ?? {})) {
    named('rop', name, () => checkRop(spec.op, points, spec.ropOptions));
  }
  return {
    cases,
    async run() {
      const failed: string[] = [];
      for (const c of cases) {
        try {
          await c.run();
        } catch (e) {
          failed.push(`${c.name}: ${describeError(e)}`);
        }
      }
      if (failed.length > 0) throw new CheckError(`${failed.length} of ${cases.length} cases failed:\n${failed.join('\n')}`);
    },
  };
}

/** `v` with the same values stored in reversed axis order and seen through a transposed view. */
function transposedCopy(v: NdArray): NdArray {
  const nd = v.shape.length;
  const reversed = [...v.shape].reverse();
  const data = new (v.data.constructor as new (n: number) => NdArray['data'])(v.data.length);
  const flat = flatValues(v);
  // Element (i0..in-1) of v goes where the reversed-shape C order puts (in-1..i0).
  const idx = new Array<number>(nd).fill(0);
  const revStrides = new Array<number>(nd);
  let acc = 1;
  for (let k = nd - 1; k >= 0; k--) {
    revStrides[k] = acc;
    acc *= reversed[k]!;
  }
  for (let i = 0; i < flat.length; i++) {
    let at = 0;
    for (let k = 0; k < nd; k++) at += idx[k]! * revStrides[nd - 1 - k]!;
    (data as unknown as number[])[at] = flat[i] as number;
    for (let k = nd - 1; k >= 0; k--) {
      if (++idx[k]! < v.shape[k]!) break;
      idx[k] = 0;
    }
  }
  const stride = v.shape.map((_, k) => revStrides[nd - 1 - k]!);
  return makeNdArray(data, [...v.shape], stride, 0);
}

/**
 * makeTester for element-wise ops (PyTensor's makeBroadcastTester): every good case with an
 * input of two or more axes also runs with its inputs in transposed memory (the strided loops).
 */
export function makeBroadcastTester(spec: OpTesterSpec): OpTester {
  const good: Record<string, readonly NdArray[]> = { ...spec.good };
  for (const [name, inputs] of Object.entries(spec.good ?? {})) {
    if (inputs.some((v) => v.shape.length >= 2)) good[`${name} (strided inputs)`] = inputs.map((v) => (v.shape.length >= 2 ? transposedCopy(v) : v));
  }
  return makeTester({ ...spec, good });
}
