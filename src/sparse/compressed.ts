// Tensor ops over a sparse matrix's parts (data, indices, indptr, shape), with worker kernels
// (kernels/sparse.ts): what the lowering rewrites write sparse products and conversions as, so
// that plans run them on the workers, chunked by rows (csr), slabs of entries (csc) or entries,
// with the same bits on any worker count. Users meet them only in
// printed graphs; the sparse ops are the API.
import { Apply } from '../graph/apply.js';
import type { KernelCall, KernelContext, SymbolicShape } from '../graph/op.js';
import { propKinds } from '../graph/prop-kinds.js';
import { scratchPart } from '../kernels/expansion.js';
import { scatterSlabs, type Epilogue, type Outer } from '../kernels/sparse.js';
import { contiguousStrides, type TensorView } from '../kernels/view.js';
import { add } from '../tensor/elemwise/math.js';
import type { ElemwiseSource } from '../kernels/elemwise.js';
import { TensorOp } from '../tensor/core/op.js';
import type { Elemwise } from '../tensor/elemwise/elemwise.js';
import { TensorType } from '../tensor/core/type.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { floatResult } from './op-args.js';
import type { Parts } from './parts.js';
import type { SparseFormat } from './value.js';

const OUTERS: readonly Outer[] = ['rows', 'columns'];
export const outerOf = (format: SparseFormat): Outer => (format === 'csr' ? 'rows' : 'columns');

/** Multiply-adds one task of a sparse walk should carry (as a dense product's tasks do). */
const SPARSE_TASK_WORK = 1 << 21;

/** The [rows, columns] a shape part holds (a small integer input: plans know its values). */
function lengthsIn(shape: TensorView): [number, number] {
  return [shape.data[shape.offset]!, shape.data[shape.offset + shape.stride[0]!]!];
}

const matrix = (dtype: string): TensorVariable => new TensorType(dtype as 'float64', [null, null]).makeVariable();
const described = (shape: readonly number[]): string => `[${shape.join(', ')}]`;

/** Chunks along the compressed index of the output: its rows for csr, its columns for csc. */
function outerChunking(outer: Outer): KernelCall['chunking'] {
  return outer === 'rows' ? { by: 'rows' } : { by: 'lanes', axis: 0 };
}

/** s times d, s given by its parts (csr: outer 'rows'), d a dense matrix: dense [rows of s, columns of d]. */
export class CompressedTimesDense extends TensorOp {
  static override readonly props = ['outer', 'label', 'transposed'] as const;
  static override readonly propKinds = { outer: propKinds.oneOf(OUTERS), label: propKinds.string(), transposed: propKinds.boolean() };

  constructor(
    readonly outer: Outer,
    /** The op errors name ("structuredDot", "sparse.dot"). */
    readonly label: string,
    /** It computes d^T s^T for the user's d s: errors name the user's operands. */
    readonly transposed = false,
  ) {
    super();
  }

  override makeNode(...inputs: unknown[]): Apply {
    const [data, indices, indptr, shape, d] = inputs as [TensorVariable, TensorVariable, TensorVariable, TensorVariable, TensorVariable];
    return new Apply(this, [data, indices, indptr, shape, d], [matrix(floatResult(this.label, data.dtype, d.dtype))]);
  }

  override kernel(node: Apply, context?: KernelContext): KernelCall {
    return this.productCall(node, context?.inputs);
  }

  /**
   * The product's kernel call for these inputs (as a planner describes them; none: one task),
   * ending with `epilogue` over the rows it writes (FusedTimesDense's, whose inputs after the
   * product's five are the epilogue's). csr: chunks of output rows. csc (a scatter into rows):
   * slabs of the stored entries, each into a partial product of its own, then their sum
   * in slab order (kernels/sparse.ts), as two steps. The WebAssembly loops run over the pool's
   * memory, so outputs stay there (copied out after).
   */
  productCall(node: Apply, inputs: readonly TensorView[] | undefined, epilogue?: Omit<Epilogue, 'first'>): KernelCall {
    const csr = this.outer === 'rows';
    const ending = (first: number) => (epilogue ? { epilogue: { ...epilogue, first } } : {});
    const call = { name: csr ? 'sparse.timesDense' : 'sparse.cscTimesDense', params: ending(5), contiguousInputs: true, outputsInArena: true } as const;
    if (!inputs) return { ...call, chunking: { by: 'none' } };
    const [data, , , shape, d] = inputs;
    const work = { work: Math.max(1, data!.shape[0]! * d!.shape[1]!), taskWork: SPARSE_TASK_WORK };
    if (csr) return { ...call, ...work, chunking: { by: 'rows' } };
    const [m, n] = [lengthsIn(shape!)[0], d!.shape[1]!];
    // The partials have the product's dtype (kernels/sparse.ts says why).
    const [dataVar, , , , dVar] = node.inputs as TensorVariable[];
    const dtype = floatResult(this.label, dataVar!.dtype, dVar!.dtype);
    const slabs = scatterSlabs(data!.shape[0]!, m, n, dtype);
    if (slabs < 2) return { ...call, ...work, chunking: { by: 'none' } };
    const partials = scratchPart(0, 0, [slabs, m, n], contiguousStrides([slabs, m, n]));
    const input = (i: number) => ({ kind: 'input', index: i }) as const;
    const all = inputs.map((_, i) => input(i));
    return {
      ...call,
      ...work,
      chunking: { by: 'none' },
      expansion: {
        scratch: [{ dtype, shape: [slabs, m, n] }],
        steps: [
          { name: 'sparse.scatterSlabs', params: {}, inputs: all.slice(0, 5), outputs: [partials], chunking: 'rows', work: work.work, label: `scatter of ${slabs} slabs of entries` },
          { name: 'sparse.sumSlabs', params: ending(1), inputs: [partials, ...all.slice(5)], outputs: [{ kind: 'output', index: 0 }], chunking: 'rows', work: slabs * m * n, label: 'sum of the slabs' },
        ],
      },
    };
  }

  override outputShapes(_node: Apply, [, , , shape, d]: readonly TensorView[]): number[][] {
    const [m, k] = lengthsIn(shape!);
    const [dk, n] = d!.shape;
    if (k !== dk) {
      const [a, b, ka, kb] = this.transposed ? [[n, dk], [k, m], dk, k] : [[m, k], d!.shape, k, dk];
      throw new RangeError(`${this.label}: shapes ${described(a)} and ${described(b)} are not aligned: input 0 has ${ka} columns, input 1 has ${kb} rows`);
    }
    return [[m, n!]];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [[(node.inputs[3] as TensorVariable).get(0), shapes[4]![1]!]];
  }
}

/**
 * A sparse product and an element-wise op of its result, in one pass (the fusion the dense side
 * of a sparse product allows): each task runs the op's program over the product's rows it has
 * just written, in place. Inputs: the product's five, then the element-wise op's others (input
 * `position` of the op is the product). The same bits as the two ops one after the other.
 */
export class FusedTimesDense extends TensorOp {
  static override readonly props = ['product', 'epilogue', 'position'] as const;
  readonly #sources = new Map<string, ElemwiseSource>();

  constructor(
    readonly product: CompressedTimesDense,
    readonly epilogue: Elemwise,
    readonly position: number,
  ) {
    super();
  }

  override makeNode(...inputs: unknown[]): Apply {
    const vars = inputs as TensorVariable[];
    const [data, , , , d] = vars;
    return new Apply(this, vars, [matrix(floatResult(this.product.label, data!.dtype, d!.dtype))]);
  }

  /** The element-wise op's node over variables of this node's types (for its program and its shape checks). */
  #epilogueNode(node: Apply): Apply {
    const extras = node.inputs.slice(5);
    const product = node.outputs[0]!.type.makeVariable();
    const ins = [...extras.slice(0, this.position), product, ...extras.slice(this.position)].map((v) => (v === product ? v : v.type.makeVariable()));
    return new Apply(this.epilogue, ins, [node.outputs[0]!.type.makeVariable()]);
  }

  #source(node: Apply): ElemwiseSource {
    const key = node.inputs.map((v) => (v.type as TensorType).dtype).join(',');
    let source = this.#sources.get(key);
    if (!source) this.#sources.set(key, (source = this.epilogue.source(this.#epilogueNode(node))));
    return source;
  }

  override kernel(node: Apply, context?: KernelContext): KernelCall {
    return this.product.productCall(node, context?.inputs, { source: this.#source(node), position: this.position });
  }

  override outputShapes(node: Apply, inputs: readonly TensorView[]): number[][] {
    const [shape] = this.product.outputShapes(node, inputs.slice(0, 5));
    const extras = inputs.slice(5).map((v) => v.shape);
    // The element-wise op's own check (its errors) of its other inputs against the product.
    this.epilogue.outputShape(this.#epilogueNode(node), [...extras.slice(0, this.position), shape!, ...extras.slice(this.position)]);
    return [shape!];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [[(node.inputs[3] as TensorVariable).get(0), shapes[4]![1]!]];
  }
}

/**
 * The parts of the same matrix in the other format (csr <-> csc) from data, indices, indptr and
 * shape: data, indices and indptr (the shape stays). `outer` is the format given.
 */
export class CompressedSwitch extends TensorOp<TensorVariable[]> {
  static override readonly props = ['outer'] as const;
  static override readonly propKinds = { outer: propKinds.oneOf(OUTERS) };

  constructor(readonly outer: Outer) {
    super();
  }

  override makeNode(...inputs: unknown[]): Apply {
    const [data, indices, indptr] = inputs as TensorVariable[];
    return new Apply(this, inputs as TensorVariable[], [data!, indices!, indptr!].map((v) => v.type.makeVariable()));
  }

  override kernel(): KernelCall {
    return { name: 'sparse.switchFormat', params: {}, chunking: { by: 'none' }, contiguousInputs: true };
  }

  override outputShapes(_node: Apply, [data, , , shape]: readonly TensorView[]): number[][] {
    const [m, n] = lengthsIn(shape!);
    const nnz = data!.shape[0]!;
    return [[nnz], [nnz], [(this.outer === 'rows' ? n : m) + 1]];
  }

  override inferShape(node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    const shape = node.inputs[3] as TensorVariable;
    const inner = shape.get(this.outer === 'rows' ? 1 : 0);
    return [shapes[0]!, shapes[1]!, [add(inner, 1)]];
  }
}

/**
 * At each stored position (r, c) of a matrix given by indices, indptr and shape: the sum over j of
 * x[r, j] y[c, j], times the stored value (input 5) when `scaled`. A new data vector for that
 * pattern: StructuredDot's gradient (x = gz, y = d) and SamplingDot (scaled by p).
 */
export class ProductsAt extends TensorOp {
  static override readonly props = ['outer', 'scaled', 'label'] as const;
  static override readonly propKinds = { outer: propKinds.oneOf(OUTERS), scaled: propKinds.boolean(), label: propKinds.string() };

  constructor(
    readonly outer: Outer,
    readonly scaled: boolean,
    readonly label: string,
  ) {
    super();
  }

  override makeNode(...inputs: unknown[]): Apply {
    const vars = inputs as TensorVariable[];
    const dtype = floatResult(this.label, ...vars.slice(3).map((v) => v.dtype));
    return new Apply(this, vars, [new TensorType(dtype, [null]).makeVariable()]);
  }

  override kernel(_node: Apply, context?: KernelContext): KernelCall {
    const [indices, , , x] = context?.inputs ?? [];
    const work = indices && x ? Math.max(1, indices.shape[0]! * x.shape[1]!) : undefined;
    return { name: 'sparse.productsAt', params: { outer: this.outer, scaled: this.scaled }, chunking: { by: 'elements' }, contiguousInputs: true, ...(work === undefined ? {} : { work, taskWork: SPARSE_TASK_WORK }) };
  }

  override outputShapes(_node: Apply, [indices, , shape, x, y]: readonly TensorView[]): number[][] {
    const [m, n] = lengthsIn(shape!);
    const [xs, ys] = [x!.shape, y!.shape];
    if (xs[0] !== m || ys[0] !== n || xs[1] !== ys[1]) {
      // As SamplingDot and StructuredDotGrad name their operands.
      const [a, b, p] = this.scaled ? ['x', 'y', 'p'] : ['gz', 'd', 's'];
      throw new RangeError(`${this.label}: ${a} ${described(xs)} times ${b}^T (${described(ys)} transposed) does not have ${p}'s shape [${m}, ${n}]`);
    }
    return [[indices!.shape[0]!]];
  }

  override inferShape(_node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [shapes[0]!];
  }
}

/** A dense matrix's elements at the stored positions of a sparse one (indices, indptr, shape): a data vector. */
export class ValuesAt extends TensorOp {
  static override readonly props = ['outer', 'label'] as const;
  static override readonly propKinds = { outer: propKinds.oneOf(OUTERS), label: propKinds.string() };

  constructor(
    readonly outer: Outer,
    readonly label: string,
  ) {
    super();
  }

  override makeNode(...inputs: unknown[]): Apply {
    const d = inputs[3] as TensorVariable;
    return new Apply(this, inputs as TensorVariable[], [new TensorType(d.dtype, [null]).makeVariable()]);
  }

  /** Walks d's strides (a broadcast view, as a sum's gradient spreads, is read in place). */
  override kernel(): KernelCall {
    return { name: 'sparse.valuesAt', params: { outer: this.outer }, chunking: { by: 'elements' } };
  }

  override outputShapes(_node: Apply, [indices, , shape, d]: readonly TensorView[]): number[][] {
    const [m, n] = lengthsIn(shape!);
    if (d!.shape[0] !== m || d!.shape[1] !== n) throw new RangeError(`${this.label}: the operands' shapes [${m}, ${n}] and ${described(d!.shape)} differ`);
    return [[indices!.shape[0]!]];
  }

  override inferShape(_node: Apply, shapes: readonly SymbolicShape[]): SymbolicShape[] {
    return [shapes[0]!];
  }
}

/** The dense matrix of a sparse one given by its parts; with a fifth input d, d plus the sparse matrix (sparse.add's). */
export class CompressedToDense extends TensorOp {
  static override readonly props = ['outer'] as const;
  static override readonly propKinds = { outer: propKinds.oneOf(OUTERS) };

  constructor(readonly outer: Outer) {
    super();
  }

  override makeNode(...inputs: unknown[]): Apply {
    const [data, , , , d] = inputs as TensorVariable[];
    return new Apply(this, inputs as TensorVariable[], [matrix(d ? floatResult('sparse.add', data!.dtype, d.dtype) : data!.dtype)]);
  }

  override kernel(node: Apply): KernelCall {
    const name = node.inputs.length === 5 ? 'sparse.addToDense' : 'sparse.toDense';
    return { name, params: { outer: this.outer }, chunking: outerChunking(this.outer), contiguousInputs: true };
  }

  override outputShapes(_node: Apply, [, , , shape, d]: readonly TensorView[]): number[][] {
    const [m, n] = lengthsIn(shape!);
    if (d && (d.shape[0] !== m || d.shape[1] !== n)) throw new RangeError(`sparse.add: the operands' shapes [${m}, ${n}] and ${described(d.shape)} differ`);
    return [[m, n]];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const shape = node.inputs[3] as TensorVariable;
    return [[shape.get(0), shape.get(1)]];
  }
}

/** s d for s given by its parts, in the format compressing `outer`. */
export const timesDense = (outer: Outer, label: string, parts: Parts, d: TensorVariable, transposed = false): TensorVariable => new CompressedTimesDense(outer, label, transposed).call(...parts, d);
/** The other format's parts of the matrix whose parts (in the format compressing `outer`) are given. */
export function switchedParts(outer: Outer, parts: Parts): Parts {
  const [data, indices, indptr] = new CompressedSwitch(outer).call(...parts);
  return [data!, indices!, indptr!, parts[3]];
}
export const productsAt = (outer: Outer, scaled: boolean, label: string, [, indices, indptr, shape]: Parts, x: TensorVariable, y: TensorVariable, values?: TensorVariable): TensorVariable =>
  new ProductsAt(outer, scaled, label).call(indices, indptr, shape, x, y, ...(values ? [values] : []));
export const valuesAt = (outer: Outer, label: string, [, indices, indptr, shape]: Parts, d: TensorVariable): TensorVariable => new ValuesAt(outer, label).call(indices, indptr, shape, d);
export const compressedToDense = (outer: Outer, parts: Parts, plus?: TensorVariable): TensorVariable => new CompressedToDense(outer).call(...parts, ...(plus ? [plus] : []));
