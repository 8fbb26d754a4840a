// DebugMode (Theano's): every node of the rewritten graph runs on the calling thread twice, with its
// perform and with its worker kernel, each on private copies of its inputs, and what the op
// declares is checked against what it does: inputs overwritten only as destroyMap says, outputs
// sharing memory only as viewMap/destroyMap say, outputs valid values of their types, inferShape
// equal to the real shapes, kernel equal to perform (whole and in chunks); then the graph before
// rewriting runs on the same inputs and must give the same outputs. Values flow on from perform.
import type { Apply } from '../graph/apply.js';
import type { Feature } from '../graph/feature.js';
import { FunctionGraph } from '../graph/fgraph.js';
import { cloneGraph } from '../graph/clone.js';
import type { IndexMap, KernelCall } from '../graph/op.js';
import type { RewriteContext } from '../graph/rewriting/context.js';
import { ReferenceExecutor } from '../graph/reference-executor.js';
import { ioToposort } from '../graph/traversal.js';
import type { Type } from '../graph/type.js';
import { isConstant, type Variable } from '../graph/variable.js';
import { isFloatDtype, type TypedArray } from '../kernels/dtype.js';
import { getKernel, hasKernel, type Kernel } from '../kernels/registry.js';
import { isContiguous, sizeOf, type TensorView } from '../kernels/view.js';
import { copyArray, empty, flatValues, isNdArray, makeNdArray, shapeText, storageDtype, type NdArray } from '../tensor/core/ndarray.js';
import { inlineArena, type Arena } from '../workers/arena.js';
import { intConstant } from '../tensor/shape/shape.js';
import { TensorType } from '../tensor/core/type.js';
import { chunkedOutput, chunkRanges, chunkUnits } from '../scheduler/chunking.js';
import { abortedBy } from '../scheduler/planned-executor.js';
import { Mode, registerModeName, type ModeOptions, type ModeRuntime, type RuntimeContext } from './mode.js';

/** Which promise an op (or a rewrite) broke. */
export type DebugCheck = 'type' | 'destroy' | 'alias' | 'inferShape' | 'kernel' | 'chunks' | 'rewrite';

export class DebugModeError extends Error {
  constructor(
    message: string,
    readonly check: DebugCheck,
    /** The node that broke it (for a rewrite: the node computing the output that changed, if any). */
    readonly node?: Apply,
    /** Its position in the execution order of the rewritten graph. */
    readonly position?: number,
  ) {
    super(message);
    this.name = 'DebugModeError';
  }
}

export interface Tolerance {
  readonly atol: number;
  readonly rtol: number;
}

export interface DebugModeOptions extends ModeOptions {
  /** Run each op's worker kernel (or view) too and compare it with perform (default true). */
  readonly checkKernels?: boolean;
  /** Evaluate each op's inferShape on the real input shapes (default true). */
  readonly checkInferShape?: boolean;
  /** Run the graph before rewriting on each call's inputs and compare (default true). */
  readonly checkRewrites?: boolean;
  /**
   * How close float values must be where two computations should agree (kernel and perform, the
   * graph before and after rewriting). Defaults: TensorType's (float32 1e-5 and 1e-5, float64
   * 1e-8 and 1e-5); integers and bools must be equal.
   */
  readonly tolerance?: Partial<Record<'float32' | 'float64', Tolerance>>;
}

const DEFAULT_TOLERANCE: Readonly<Record<'float32' | 'float64', Tolerance>> = {
  float32: { atol: 1e-5, rtol: 1e-5 },
  float64: { atol: 1e-8, rtol: 1e-5 },
};
const EXACT: Tolerance = { atol: 0, rtol: 0 };

/** How many chunks the kernel check splits a chunkable call into. */
const CHECK_CHUNKS = 3;

interface Settings {
  readonly kernels: boolean;
  readonly inferShape: boolean;
  readonly rewrites: boolean;
  readonly tolerance: Readonly<Record<'float32' | 'float64', Tolerance>>;
}

/** One replacement made while rewriting, with copies of both sides as they stood then. */
interface Replacement {
  readonly reason: string;
  readonly oldVar: Variable;
  readonly newVar: Variable;
  /** oldVar and newVar as expressions of the graph inputs, frozen at the time of the change. */
  readonly frozen: readonly [Variable, Variable];
}

/** Listens to a graph being rewritten and keeps every replacement (undone ones are dropped). */
class ReplacementRecorder implements Feature {
  readonly replacements: Replacement[] = [];
  readonly #seen = new Set<string>();

  onChangeInput(fg: FunctionGraph, _client: unknown, oldVar: Variable, newVar: Variable, reason: string): void {
    if (reason.startsWith('undo ')) {
      const at = this.replacements.findLastIndex((r) => r.oldVar === newVar && r.newVar === oldVar);
      if (at >= 0) {
        this.replacements.splice(at, 1);
        this.#seen.delete(`${newVar.id}>${oldVar.id}`);
      }
      return;
    }
    const key = `${oldVar.id}>${newVar.id}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    const { outputs } = cloneGraph(fg.inputs, [oldVar, newVar], { copyInputs: false });
    this.replacements.push({ reason, oldVar, newVar, frozen: [outputs[0]!, outputs[1]!] });
  }
}

/** The replacements made while each graph was rewritten by a DebugMode. */
const replacementsOf = new WeakMap<FunctionGraph, readonly Replacement[]>();

function mapText(map: IndexMap): string {
  return `{${Object.entries(map)
    .map(([o, ins]) => `${o}: [${ins.join(', ')}]`)
    .join(', ')}}`;
}

function nodeHead(node: Apply, position: number): string {
  return `${node.op} (node ${position}: ${node})`;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function isTypedNdArray(v: unknown): v is NdArray {
  return isNdArray(v) && ArrayBuffer.isView(v.data);
}

/** A copy of `x`'s whole buffer in `arena`'s shared memory (so its strides and offset still apply). */
function copyInto(arena: Arena, x: NdArray): TypedArray {
  const data = arena.array(storageDtype(x), x.data.length);
  data.set(x.data);
  return data;
}

/**
 * A copy that shares no memory with `v` and keeps its layout (strides and offset), so that the
 * op meets the strides it would have met, and a write anywhere in the buffer shows.
 */
function privateCopy(type: Type, v: unknown): unknown {
  if (isTypedNdArray(v)) return makeNdArray(v.data.slice() as TypedArray, v.shape, v.stride, v.offset);
  return type.copyValue(v);
}

/** Same elements in the whole buffer (NaN equals NaN)? */
function sameBuffer(a: TypedArray, b: TypedArray): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const p = a[i]!;
    const q = b[i]!;
    if (p !== q && !(p !== p && q !== q)) return false;
  }
  return true;
}

/** Is `copy` (given to the op) still what `original` was? */
function unchanged(type: Type, original: unknown, copy: unknown): boolean {
  if (isTypedNdArray(original) && isTypedNdArray(copy)) return sameBuffer(original.data, copy.data);
  return type.valuesEq(original, copy);
}

function bufferOf(v: unknown): ArrayBufferLike | undefined {
  return isTypedNdArray(v) ? v.data.buffer : undefined;
}

/** The C-order index of flat position `k` in `shape`. */
function indexAt(k: number, shape: readonly number[]): number[] {
  const index = new Array<number>(shape.length).fill(0);
  let rest = k;
  for (let a = shape.length - 1; a >= 0; a--) {
    const d = shape[a]!;
    index[a] = d === 0 ? 0 : rest % d;
    rest = d === 0 ? 0 : Math.floor(rest / d);
  }
  return index;
}

type Difference =
  | { readonly kind: 'shape'; readonly got: readonly number[]; readonly want: readonly number[] }
  | { readonly kind: 'value'; readonly index: readonly number[]; readonly got: number; readonly want: number };

/**
 * Where `got` first differs from `want` beyond `tol` (NaN matches NaN, an infinity only itself),
 * or undefined. `lenient` skips the elements where `want` is not finite: a stabilizing rewrite
 * may compute a number where the graph before it overflowed.
 */
function firstDifference(got: NdArray, want: NdArray, tol: Tolerance, lenient = false): Difference | undefined {
  if (got.shape.length !== want.shape.length || got.shape.some((d, a) => d !== want.shape[a])) {
    return { kind: 'shape', got: got.shape, want: want.shape };
  }
  const x = flatValues(got);
  const y = flatValues(want);
  for (let i = 0; i < y.length; i++) {
    const p = x[i]!;
    const q = y[i]!;
    if (p === q || (p !== p && q !== q)) continue;
    if (lenient && !Number.isFinite(q)) continue;
    if (Number.isFinite(q) && Math.abs(p - q) <= tol.atol + tol.rtol * Math.abs(q)) continue;
    return { kind: 'value', index: indexAt(i, want.shape), got: p, want: q };
  }
  return undefined;
}

/** Bitwise-identical elements (NaN matches NaN), for chunked against whole kernel runs. */
function firstMismatch(got: NdArray, want: NdArray): Difference | undefined {
  return firstDifference(got, want, EXACT);
}

/** 1e-5 rather than 0.00001. */
function small(x: number): string {
  return x !== 0 && Math.abs(x) < 1e-3 ? x.toExponential() : String(x);
}

function toleranceText(dtype: string, tol: Tolerance): string {
  return tol === EXACT ? `${dtype}: exact` : `${dtype}: atol ${small(tol.atol)}, rtol ${small(tol.rtol)}`;
}

/** A node's inferShape as a small graph over placeholders for its inputs' unknown lengths. */
interface ShapeGraph {
  /** Placeholder -> [input index, axis]. */
  readonly placeholders: ReadonlyMap<Variable, readonly [number, number]>;
  readonly order: readonly Apply[];
  readonly shapes: ReadonlyArray<readonly Variable[]>;
}

class DebugRuntime implements ModeRuntime {
  readonly #fg: FunctionGraph;
  readonly #name: string;
  readonly #settings: Settings;
  readonly #executor: ReferenceExecutor;
  readonly #original: ReferenceExecutor | undefined;
  readonly #replacements: readonly Replacement[];
  readonly #shapeGraphs = new Map<Apply, ShapeGraph | DebugModeError | undefined>();

  constructor(context: RuntimeContext, settings: Settings, replacements: readonly Replacement[]) {
    this.#fg = context.fgraph;
    this.#name = context.name;
    this.#settings = settings;
    this.#executor = new ReferenceExecutor(context.fgraph);
    this.#original = settings.rewrites ? new ReferenceExecutor(context.original) : undefined;
    this.#replacements = replacements;
  }

  async run(inputs: readonly NdArray[], signal?: AbortSignal): Promise<NdArray[]> {
    /** Each buffer of a value computed or given so far, and whose it is. */
    const owners = new Map<ArrayBufferLike, Variable>();
    const own = (v: Variable, value: unknown): void => {
      const b = bufferOf(value);
      if (b && !owners.has(b)) owners.set(b, v);
    };
    for (const v of this.#fg.variables) if (isConstant(v)) own(v, v.data);
    const results = this.#executor.run(inputs, {
      inputsAreCopies: true,
      signal,
      aborted: (s) => abortedBy(s, `${this.#name}: the call was aborted`),
      input: (_i, v, value) => own(v, value),
      // Each node works on private copies: what it does to them shows whether it kept its word.
      arguments: (node, _k, values) => values.map((a, i) => privateCopy(node.inputs[i]!.type, a)),
      after: (node, k, { values: args, given, outputs: outs, live }) => {
        this.#checkTypes(node, k, outs);
        this.#checkInputsKept(node, k, args, given, '');
        this.#checkAliases(node, k, outs, given, owners);
        if (this.#settings.inferShape) this.#checkInferShape(node, k, outs as NdArray[], live);
        if (this.#settings.kernels) this.#checkKernel(node, k, args, outs as NdArray[]);
        node.outputs.forEach((o, j) => own(o, outs[j]));
      },
    }) as NdArray[];
    if (this.#original) this.#checkRewrites(inputs, results);
    return results;
  }

  /** Every output must be a valid value of its type, as it stands (no conversion). */
  #checkTypes(node: Apply, k: number, outs: readonly unknown[]): void {
    node.outputs.forEach((o, j) => {
      try {
        o.type.filter(outs[j], { strict: true, what: String(o.type) });
      } catch (e) {
        throw new DebugModeError(`${nodeHead(node, k)} returned a bad value for output ${j} (${o}): ${messageOf(e)}`, 'type', node, k);
      }
    });
  }

  /** The copies given to the op must be unchanged, except the inputs its destroyMap names. */
  #checkInputsKept(node: Apply, k: number, args: readonly unknown[], given: readonly unknown[], who: string): void {
    const destroyed = new Set(Object.values(node.op.destroyMap).flat());
    node.inputs.forEach((v, i) => {
      if (destroyed.has(i) || unchanged(v.type, args[i], given[i])) return;
      const subject = who ? `${nodeHead(node, k)}: ${who}` : nodeHead(node, k);
      throw new DebugModeError(`${subject} modified input ${i} (${v}) but its destroyMap is ${mapText(node.op.destroyMap)}`, 'destroy', node, k);
    });
  }

  /**
   * Outputs may share memory with an input only where viewMap or destroyMap pairs them, with
   * each other only when both are declared on one input, and never with any other value.
   */
  #checkAliases(node: Apply, k: number, outs: readonly unknown[], given: readonly unknown[], owners: ReadonlyMap<ArrayBufferLike, Variable>): void {
    const { viewMap, destroyMap } = node.op;
    const declared = (j: number): number[] => [...(viewMap[j] ?? []), ...(destroyMap[j] ?? [])];
    const maps = `its viewMap is ${mapText(viewMap)} and its destroyMap is ${mapText(destroyMap)}`;
    node.outputs.forEach((o, j) => {
      const out = outs[j];
      node.inputs.forEach((v, i) => {
        if (declared(j).includes(i) || !o.type.mayShareMemory(out, given[i])) return;
        throw new DebugModeError(`${nodeHead(node, k)} returned output ${j} sharing memory with input ${i} (${v}) but ${maps}`, 'alias', node, k);
      });
      for (let m = 0; m < j; m++) {
        if (!o.type.mayShareMemory(out, outs[m])) continue;
        if (declared(j).some((i) => declared(m).includes(i))) continue;
        throw new DebugModeError(`${nodeHead(node, k)} returned outputs ${m} and ${j} sharing memory but ${maps}`, 'alias', node, k);
      }
      const b = bufferOf(out);
      const other = b && owners.get(b);
      if (other) {
        throw new DebugModeError(
          `${nodeHead(node, k)} returned output ${j} sharing memory with the value of ${other}, which it was not given ` +
            '(outputs must be new memory or views of its inputs)',
          'alias',
          node,
          k,
        );
      }
    });
  }

  #shapeGraph(node: Apply, k: number): ShapeGraph | DebugModeError | undefined {
    if (this.#shapeGraphs.has(node)) return this.#shapeGraphs.get(node);
    let made: ShapeGraph | DebugModeError | undefined;
    const op = node.op;
    if (op.inferShape) {
      const placeholders = new Map<Variable, readonly [number, number]>();
      const symbolic = node.inputs.map((v, i) =>
        v.type instanceof TensorType
          ? v.type.shape.map((d, a) => {
              if (d !== null) return intConstant(d);
              const p = new TensorType('int32', []).makeVariable(`${v}.shape[${a}]`);
              placeholders.set(p, [i, a]);
              return p;
            })
          : [],
      );
      try {
        const shapes = op.inferShape(node, symbolic);
        if (shapes.length !== node.outputs.length) {
          throw new Error(`it returned ${shapes.length} shapes for ${node.outputs.length} outputs`);
        }
        const order = ioToposort([...placeholders.keys(), ...node.inputs, ...this.#fg.inputs], shapes.flat());
        if (order.includes(node) || shapes.flat().some((d) => d.owner === node)) throw new Error("the shapes it gives depend on the node's own outputs");
        made = { placeholders, order, shapes };
      } catch (e) {
        made = new DebugModeError(`${nodeHead(node, k)}: its inferShape failed: ${messageOf(e)}`, 'inferShape', node, k);
      }
    }
    this.#shapeGraphs.set(node, made);
    return made;
  }

  /** inferShape, evaluated on the real input shapes, must give the real output shapes. */
  #checkInferShape(node: Apply, k: number, outs: readonly NdArray[], values: ReadonlyMap<Variable, unknown>): void {
    const graph = this.#shapeGraph(node, k);
    if (graph === undefined) return;
    if (graph instanceof DebugModeError) throw graph;
    const local = new Map<Variable, unknown>();
    for (const [p, [i, a]] of graph.placeholders) {
      const x = values.get(node.inputs[i]!) ?? (isConstant(node.inputs[i]!) ? node.inputs[i]!.data : undefined);
      local.set(p, makeNdArray(Int32Array.of((x as NdArray).shape[a]!), []));
    }
    const valueOf = (v: Variable): unknown => {
      if (local.has(v)) return local.get(v);
      if (values.has(v)) return values.get(v);
      if (isConstant(v)) return v.data;
      throw new Error(`no value for ${v}`);
    };
    const lengths: number[][] = [];
    try {
      for (const n of graph.order) {
        if (n.outputs.every((o) => values.has(o))) continue;
        const results = n.op.perform(n, n.inputs.map(valueOf));
        n.outputs.forEach((o, j) => local.set(o, results[j]));
      }
      graph.shapes.forEach((dims) => {
        lengths.push(
          dims.map((d) => {
            const v = valueOf(d) as NdArray;
            return Number(v.data[v.offset]);
          }),
        );
      });
    } catch (e) {
      throw new DebugModeError(`${nodeHead(node, k)}: its inferShape failed on these inputs: ${messageOf(e)}`, 'inferShape', node, k);
    }
    lengths.forEach((got, j) => {
      const want = outs[j]!.shape;
      if (got.length === want.length && got.every((d, a) => d === want[a])) return;
      throw new DebugModeError(
        `${nodeHead(node, k)}: its inferShape gives shape ${shapeText(got)} for output ${j} but perform returned shape ${shapeText(want)}`,
        'inferShape',
        node,
        k,
      );
    });
  }

  #tolerance(type: Type): { tol: Tolerance; text: string } {
    const dtype = type instanceof TensorType ? type.dtype : undefined;
    const tol = dtype && isFloatDtype(dtype) ? this.#settings.tolerance[dtype] : EXACT;
    return { tol, text: toleranceText(dtype ?? String(type), tol) };
  }

  /**
   * The worker path (the op's view, or outputShapes + allocation + its registered kernel) on
   * fresh copies must agree with perform, leave undeclared inputs alone, and give bitwise the
   * same outputs when run in chunks.
   */
  #checkKernel(node: Apply, k: number, args: readonly unknown[], want: readonly NdArray[]): void {
    const op = node.op;
    const head = nodeHead(node, k);
    const fail = (message: string, check: DebugCheck = 'kernel'): never => {
      throw new DebugModeError(`${head}: ${message}`, check, node, k);
    };
    const inputs = args.map((a, i) => privateCopy(node.inputs[i]!.type, a)) as NdArray[];
    let got: NdArray[] | undefined;
    let who = 'its view';
    if (op.view) {
      let views: TensorView[] | undefined;
      try {
        views = op.view(node, inputs);
      } catch (e) {
        fail(`its view failed where perform succeeded: ${messageOf(e)}`);
      }
      if (views) got = views.map((v, j) => makeNdArray(inputs[op.viewMap[j]?.[0] ?? 0]!.data, v.shape, v.stride, v.offset));
    }
    let call: KernelCall | undefined;
    if (!got) {
      call = op.kernel?.(node);
      if (!call || !call.name || !op.outputShapes) return;
      who = `its kernel '${call.name}'`;
      if (!hasKernel(call.name)) fail(`${who} is not registered on the calling thread (import the module that registers it)`);
      const kernel = getKernel(call.name);
      let shapes: number[][] = [];
      try {
        shapes = op.outputShapes(node, inputs);
      } catch (e) {
        // An op whose shapes depend on its data runs perform in plans too: nothing to compare.
        if (e instanceof Error && e.name === 'UnknownShapesError') return;
        fail(`its outputShapes failed where perform succeeded: ${messageOf(e)}`);
      }
      const allocate = (): NdArray[] => node.outputs.map((o, j) => empty((o.type as TensorType).dtype, shapes[j] ?? []));
      // An output that overwrites an input is that input's memory, as plans lay it out (gemmInplace
      // reads z from its output): each run gets fresh copies of the inputs, since a run destroys them.
      const destroyed = Object.entries(op.destroyMap).map(([j, is]) => [Number(j), is[0]!] as const);
      const kernelRun = (given: readonly NdArray[]): { readonly ins: NdArray[]; readonly outs: NdArray[] } => {
        // What the kernel reads: contiguous copies where it asks for them, as plans give it.
        const ins = call!.contiguousInputs ? given.map((x) => (isContiguous(x) ? x : copyArray(x))) : [...given];
        const outs = allocate();
        for (const [j, i] of destroyed) outs[j] = ins[i]!;
        return { ins, outs };
      };
      const freshInputs = (): NdArray[] => args.map((a, i) => privateCopy(node.inputs[i]!.type, a)) as NdArray[];
      const first = kernelRun(inputs);
      const kernelInputs = first.ins;
      got = first.outs;
      try {
        kernel(kernelInputs, got, call.params);
      } catch (e) {
        fail(`${who} failed where perform succeeded: ${messageOf(e)}`);
      }
      this.#checkInputsKept(node, k, args, inputs, who);
      const units = got.length > 0 ? chunkUnits(call.chunking, got[chunkedOutput(call.chunking)]!.shape) : 0;
      if (units > 1) {
        const ranges = chunkRanges(units, CHECK_CHUNKS);
        const chunks = ranges.length;
        const { ins: chunkInputs, outs: parts } = destroyed.length > 0 ? kernelRun(freshInputs()) : { ins: kernelInputs, outs: allocate() };
        try {
          for (const range of ranges) kernel(chunkInputs, parts, call.params, range);
        } catch (e) {
          fail(`${who} failed when run in chunks: ${messageOf(e)}`, 'chunks');
        }
        parts.forEach((p, j) => {
          const d = firstMismatch(p, got![j]!);
          if (d?.kind !== 'value') return;
          fail(
            `${who} run in ${chunks} chunks (by ${call!.chunking.by}) gives ${d.got} at index ${shapeText(d.index)} of output ${j}, ` +
              `one whole call gives ${d.want}`,
            'chunks',
          );
        });
      }
      this.#checkSharedMemory(node, kernel, destroyed.length > 0 ? kernelRun(freshInputs()).ins : kernelInputs, got, call, who, fail, destroyed);
    } else {
      this.#checkInputsKept(node, k, args, inputs, who);
    }
    got.forEach((g, j) => {
      const { tol, text } = this.#tolerance(node.outputs[j]!.type);
      const d = firstDifference(g, want[j]!, tol);
      if (!d) return;
      const path = call ? 'the kernel' : 'the view';
      const what =
        d.kind === 'shape'
          ? `${path} gives shape ${shapeText(d.got)} and perform gives shape ${shapeText(d.want)}`
          : `at index ${shapeText(d.index)} ${path} gives ${d.got} and perform gives ${d.want} (${text})`;
      fail(`${who} and its perform disagree on output ${j} (${node.outputs[j]}): ${what}`);
    });
  }

  /**
   * Workers run kernels on the pool's shared memory, where the WebAssembly loops apply (a user's
   * scalar op runs its wasm form there): the same call on copies in shared memory must give the
   * bits it gives on ordinary memory, where the JS loops run.
   */
  #checkSharedMemory(
    node: Apply,
    kernel: Kernel,
    inputs: readonly NdArray[],
    want: readonly NdArray[],
    call: KernelCall,
    who: string,
    fail: (m: string) => never,
    destroyed: ReadonlyArray<readonly [number, number]>,
  ): void {
    if (!inputs.every(isTypedNdArray) || !want.every(isTypedNdArray)) return;
    const arena = inlineArena();
    const ins = inputs.map((x) => makeNdArray(copyInto(arena, x), x.shape, x.stride, x.offset));
    const outs = want.map((w) => makeNdArray(arena.array(storageDtype(w), sizeOf(w.shape)), w.shape));
    for (const [j, i] of destroyed) outs[j] = ins[i]!;
    try {
      kernel(ins, outs, call.params);
    } catch (e) {
      fail(`${who} failed on shared memory (as workers run it) where it succeeded on ordinary memory: ${messageOf(e)}`);
    }
    outs.forEach((o, j) => {
      const d = firstMismatch(o, want[j]!);
      if (d?.kind !== 'value') return;
      fail(
        `${who} on shared memory (as workers run it, where WebAssembly loops apply) gives ${d.got} at index ${shapeText(d.index)} ` +
          `of output ${j} (${node.outputs[j]}), on ordinary memory (the JS loops) ${d.want}`,
      );
    });
  }

  /** The graph before rewriting, on the same inputs, must give the same outputs. */
  #checkRewrites(inputs: readonly NdArray[], results: readonly NdArray[]): void {
    const fg = this.#fg;
    const copies = inputs.map((v, i) => privateCopy(fg.inputs[i]!.type, v));
    let before: unknown[];
    try {
      before = this.#original!.run(copies);
    } catch (e) {
      throw new DebugModeError(
        `the graph of ${this.#name} before rewriting fails on these inputs, where the rewritten graph succeeds: ${messageOf(e)}`,
        'rewrite',
      );
    }
    fg.outputs.forEach((o, i) => {
      if (!isTypedNdArray(results[i]) || !isTypedNdArray(before[i])) {
        if (o.type.valuesEqApprox(results[i], before[i])) return;
        throw new DebugModeError(`the rewrites changed output ${i} of ${this.#name}`, 'rewrite');
      }
      const { tol, text } = this.#tolerance(o.type);
      const d = firstDifference(results[i], before[i], tol, true);
      if (!d) return;
      const position = o.owner ? this.#executor.order.indexOf(o.owner) : -1;
      const where = o.owner ? `it is computed by ${nodeHead(o.owner, position)}` : `it is ${o}`;
      const what =
        d.kind === 'shape'
          ? `the graph before rewriting gives shape ${shapeText(d.want)} and the rewritten graph ${shapeText(d.got)}`
          : `at index ${shapeText(d.index)} the graph before rewriting gives ${d.want} and the rewritten graph ${d.got} (${text})`;
      const culprit = this.#culprit(inputs);
      throw new DebugModeError(
        `the rewrites changed output ${i} of ${this.#name}: ${what}; after rewriting ${where}${culprit ? `; ${culprit}` : ''}`,
        'rewrite',
        o.owner ?? undefined,
        o.owner ? position : undefined,
      );
    });
  }

  /** The first recorded replacement whose two sides differ on these inputs, described. */
  #culprit(inputs: readonly NdArray[]): string | undefined {
    for (const r of this.#replacements) {
      let sides: unknown[];
      try {
        const fg = new FunctionGraph(this.#fg.inputs, [...r.frozen]);
        sides = new ReferenceExecutor(fg).run(inputs.map((v, i) => privateCopy(this.#fg.inputs[i]!.type, v)));
      } catch {
        continue;
      }
      const [oldV, newV] = r.frozen;
      if (!isTypedNdArray(sides[0]) || !isTypedNdArray(sides[1])) continue;
      const { tol, text } = this.#tolerance(oldV.type);
      const d = firstDifference(sides[1], sides[0], tol, true);
      if (!d) continue;
      const show = (v: Variable): string => (v.owner ? String(v.owner) : String(v));
      const what =
        d.kind === 'shape'
          ? `shape ${shapeText(d.got)} where ${shapeText(d.want)} was computed`
          : `${d.got} where ${d.want} was computed, at index ${shapeText(d.index)} (${text})`;
      return `the first rewrite that changed a value: '${r.reason}' replaced ${show(oldV)} with ${show(newV)}, which gives ${what}`;
    }
    return undefined;
  }
}

function settingsOf(options: DebugModeOptions): Settings {
  return {
    kernels: options.checkKernels ?? true,
    inferShape: options.checkInferShape ?? true,
    rewrites: options.checkRewrites ?? true,
    tolerance: { ...DEFAULT_TOLERANCE, ...options.tolerance },
  };
}

export class DebugMode extends Mode {
  readonly #settings: Settings;

  constructor(readonly debugOptions: DebugModeOptions = {}) {
    super({ ...debugOptions, name: debugOptions.name ?? 'DebugMode' });
    this.#settings = settingsOf(debugOptions);
  }

  override including(...tags: string[]): DebugMode {
    return new DebugMode({ ...this.debugOptions, including: [...(this.debugOptions.including ?? []), ...tags] });
  }

  override excluding(...tags: string[]): DebugMode {
    return new DebugMode({ ...this.debugOptions, excluding: [...(this.debugOptions.excluding ?? []), ...tags] });
  }

  /** Rewrites as the base mode does, keeping each replacement to find a rewrite that changes values. */
  override rewrite(fg: FunctionGraph): RewriteContext {
    if (!this.#settings.rewrites) return super.rewrite(fg);
    const recorder = new ReplacementRecorder();
    fg.attachFeature(recorder);
    try {
      return super.rewrite(fg);
    } finally {
      fg.removeFeature(recorder);
      replacementsOf.set(fg, recorder.replacements);
    }
  }

  override makeRuntime(context: RuntimeContext): ModeRuntime {
    return new DebugRuntime(context, this.#settings, replacementsOf.get(context.fgraph) ?? []);
  }
}

registerModeName('DebugMode', () => new DebugMode());
