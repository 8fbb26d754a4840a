// Blocks of sparse matrices: a rectangular block out of one (`getBlock`, and `get(rows, cols?)`
// with weft.slice bounds), one placed into zeros (`padBlock`, the block's gradient and the
// block's inverse), and vstack / hstack, whose gradients are blocks of the output gradient.
import { Apply } from '../graph/apply.js';
import { disconnected } from '../graph/gradient.js';
import { Op, type SymbolicShape } from '../graph/op.js';
import { propKinds } from '../graph/prop-kinds.js';
import type { Variable } from '../graph/variable.js';
import { flatValues, type NdArray } from '../tensor/core/ndarray.js';
import { lazy } from '../tensor/core/op.js';
import { Slice } from '../tensor/core/slice.js';
import type { TensorVariable } from '../tensor/core/variable.js';
import { add as denseAdd, sub as denseSub } from '../tensor/elemwise/math.js';
import { asIntScalar } from '../tensor/shape/shape.js';
import { asFormat } from './compute.js';
import { toFormat } from './convert.js';
import { bindOps } from './bound-ops.js';
import { FormatOp } from './format-op.js';
import { sparseLength } from './length.js';
import { outputDtype, sparseOutput } from './op-args.js';
import { asSparseVariable, type SparseLike, type SparseVariable } from './type.js';
import { DATA_CLASS, outerInner, trustedSparse, type SparseFormat, type SparseValue } from './value.js';

const int = (x: unknown): number => flatValues(x as NdArray)[0]!;

/** [rows, columns] of a matrix in format f as [outer, inner] pairs, and back (the same swap). */
const oriented = (format: SparseFormat, rows: readonly [number, number], cols: readonly [number, number]) =>
  format === 'csr' ? { outer: rows, inner: cols } : { outer: cols, inner: rows };

/** A sparse matrix and four int32 scalars (bounds, offsets, lengths) in, a sparse matrix of its format out. */
abstract class BlockOp extends Op<Variable> {
  protected abstract readonly label: string;

  override makeNode(s: unknown, ...ints: unknown[]): Apply {
    const v = asSparseVariable(s, `${this.label}: input 0`);
    if (ints.length !== 4) throw new TypeError(`${this.label}: expected a matrix and 4 integers, got ${ints.length} integers`);
    const scalars = ints.map((b, i) => asIntScalar(b as number | Variable, `${this.label}: input ${i + 1}`));
    return new Apply(this, [v, ...scalars], [sparseOutput(v.format, v.dtype)]);
  }

  /** Only the matrix has a gradient; the integers are discrete. */
  override connectionPattern(): boolean[][] {
    return [[true], [false], [false], [false], [false]];
  }
}

/** Rows r0 to r1 - 1 and columns c0 to c1 - 1 of s (int32 scalars), in s's format. */
export class GetBlock extends BlockOp {
  protected readonly label = 'sparse.getBlock';

  override perform(node: Apply, [s, ...bounds]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    const [r0, r1, c0, c1] = bounds.map(int) as [number, number, number, number];
    const ok = (a: number, b: number, n: number) => 0 <= a && a <= b && b <= n;
    if (!ok(r0, r1, v.shape[0]) || !ok(c0, c1, v.shape[1])) {
      throw new RangeError(`sparse.getBlock: rows ${r0}:${r1} and columns ${c0}:${c1} are not a block of a [${v.shape.join(', ')}] matrix (0 <= start <= stop <= length)`);
    }
    const { outer, inner } = oriented(v.format, [r0, r1], [c0, c1]);
    const data: number[] = [];
    const indices: number[] = [];
    const indptr = new Int32Array(outer[1] - outer[0] + 1);
    for (let o = outer[0]; o < outer[1]; o++) {
      for (let k = v.indptr[o]!; k < v.indptr[o + 1]!; k++) {
        const i = v.indices[k]!;
        if (i >= inner[0] && i < inner[1]) {
          indices.push(i - inner[0]);
          data.push(v.data[k]!);
        }
      }
      indptr[o - outer[0] + 1] = data.length;
    }
    return [trustedSparse(v.format, [r1 - r0, c1 - c0], DATA_CLASS[outputDtype(node)].from(data), Int32Array.from(indices), indptr)];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const [, r0, r1, c0, c1] = node.inputs as TensorVariable[];
    return [[denseSub(r1!, r0!), denseSub(c1!, c0!)]];
  }

  override grad([s, r0, , c0]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    return [padBlock(gz!, r0!, c0!, sparseLength(s!, 0), sparseLength(s!, 1)), disconnected(), disconnected(), disconnected(), disconnected()];
  }

  override rop([, r0, r1, c0, c1]: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [getBlock(es!, r0!, r1!, c0!, c1!)];
  }
}

/** s placed at row r0 and column c0 of a rows x cols matrix of zeros (int32 scalars), in s's format. */
export class PadBlock extends BlockOp {
  protected readonly label = 'sparse.padBlock';

  override perform(node: Apply, [s, ...ints]: readonly unknown[]): unknown[] {
    const v = s as SparseValue;
    const [r0, c0, rows, cols] = ints.map(int) as [number, number, number, number];
    if (r0 < 0 || c0 < 0 || r0 + v.shape[0] > rows || c0 + v.shape[1] > cols) {
      throw new RangeError(`sparse.padBlock: a [${v.shape.join(', ')}] block at row ${r0}, column ${c0} does not fit in a [${rows}, ${cols}] matrix`);
    }
    const { outer, inner } = oriented(v.format, [r0, rows], [c0, cols]);
    const [n] = outerInner(v.format, v.shape);
    const indptr = new Int32Array(outer[1] + 1);
    for (let o = 0; o < outer[1]; o++) indptr[o + 1] = v.indptr[Math.max(0, Math.min(n, o + 1 - outer[0]))]!;
    const indices = v.indices.map((i) => i + inner[0]);
    return [trustedSparse(v.format, [rows, cols], DATA_CLASS[outputDtype(node)].from(v.data), indices, indptr)];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    return [[node.inputs[3]!, node.inputs[4]!]];
  }

  override grad([s, r0, c0]: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    const r1 = denseAdd(r0 as TensorVariable, sparseLength(s!, 0));
    const c1 = denseAdd(c0 as TensorVariable, sparseLength(s!, 1));
    return [getBlock(gz!, r0!, r1, c0!, c1), disconnected(), disconnected(), disconnected(), disconnected()];
  }

  override rop([, r0, c0, rows, cols]: readonly Variable[], [es]: readonly Variable[]): Variable[] {
    return [padBlock(es!, r0!, c0!, rows!, cols!)];
  }
}

/**
 * Matrices joined along the rows (vstack: axis 0) or the columns (hstack: axis 1), into
 * `format`. Their other lengths must agree. Gradient: each input's block of gz, in its format.
 */
export class Stack extends FormatOp {
  static override readonly props = ['axis', 'format'] as const;
  static override readonly propKinds = { ...FormatOp.propKinds, axis: propKinds.int(0, 1) };

  constructor(
    readonly axis: 0 | 1,
    format: SparseFormat,
  ) {
    super(format);
    if (axis !== 0 && axis !== 1) throw new RangeError(`Stack: axis must be 0 (vstack) or 1 (hstack), got ${String(axis)}`);
  }

  get #name(): string {
    return this.axis === 0 ? 'sparse.vstack' : 'sparse.hstack';
  }

  override makeNode(...blocks: unknown[]): Apply {
    if (blocks.length === 0) throw new TypeError(`${this.#name}: expected at least one matrix`);
    const vs = blocks.map((b, i) => asSparseVariable(b, `${this.#name}: input ${i}`));
    const dtype = vs.some((v) => v.dtype === 'float64') ? 'float64' : 'float32';
    return new Apply(this, vs, [sparseOutput(this.format, dtype)]);
  }

  override perform(node: Apply, values: readonly unknown[]): unknown[] {
    // vstack joins csr matrices along their compressed axis (rows), hstack csc ones (columns).
    const along: SparseFormat = this.axis === 0 ? 'csr' : 'csc';
    const parts = (values as SparseValue[]).map((v) => asFormat(v, along));
    const other = 1 - this.axis;
    parts.forEach((p, i) => {
      if (p.shape[other] !== parts[0]!.shape[other]) {
        throw new RangeError(`${this.#name}: input ${i} has ${p.shape[other]} ${other === 1 ? 'columns' : 'rows'}, input 0 has ${parts[0]!.shape[other]}`);
      }
    });
    const nnz = parts.reduce((n, p) => n + p.data.length, 0);
    const data = new DATA_CLASS[outputDtype(node)](nnz);
    const indices = new Int32Array(nnz);
    const indptr: number[] = [0];
    let at = 0;
    for (const p of parts) {
      data.set(p.data, at);
      indices.set(p.indices, at);
      for (let o = 1; o < p.indptr.length; o++) indptr.push(at + p.indptr[o]!);
      at += p.data.length;
    }
    const length = parts.reduce((n, p) => n + p.shape[this.axis], 0);
    const shape: [number, number] = this.axis === 0 ? [length, parts[0]!.shape[1]] : [parts[0]!.shape[0], length];
    return [asFormat(trustedSparse(along, shape, data, indices, Int32Array.from(indptr)), this.format)];
  }

  override inferShape(node: Apply): SymbolicShape[] {
    const lengths = node.inputs.map((v) => sparseLength(v, this.axis));
    const total = lengths.length === 1 ? lengths[0]! : denseAdd(...lengths);
    const other = sparseLength(node.inputs[0]!, this.axis === 0 ? 1 : 0);
    return [this.axis === 0 ? [total, other] : [other, total]];
  }

  override grad(inputs: readonly Variable[], [gz]: readonly Variable[]): Variable[] {
    let start: TensorVariable | number = 0;
    return inputs.map((v) => {
      const stop: TensorVariable = denseAdd(start, sparseLength(v, this.axis));
      const whole = [0, sparseLength(v, this.axis === 0 ? 1 : 0)] as const;
      const block = this.axis === 0 ? getBlock(gz!, start, stop, ...whole) : getBlock(gz!, ...whole, start, stop);
      start = stop;
      return toFormat(block, (v as SparseLike).format);
    });
  }

  override rop(_inputs: readonly Variable[], evs: readonly Variable[]): Variable[] {
    return [new Stack(this.axis, this.format).call(...evs) as Variable];
  }
}

const getBlockOp = lazy(() => new GetBlock());
const padBlockOp = lazy(() => new PadBlock());

type Bound = number | Variable;

/** `weft.sparse.getBlock(s, r0, r1, c0, c1)`: rows r0:r1 and columns c0:c1 of s. */
export function getBlock(s: unknown, r0: Bound, r1: Bound, c0: Bound, c1: Bound): SparseVariable {
  return getBlockOp().call(s, r0, r1, c0, c1) as SparseVariable;
}

/** `weft.sparse.padBlock(s, r0, c0, rows, cols)`: s at (r0, c0) of a rows x cols matrix of zeros. */
export function padBlock(s: unknown, r0: Bound, c0: Bound, rows: Bound, cols: Bound): SparseVariable {
  return padBlockOp().call(s, r0, c0, rows, cols) as SparseVariable;
}

/** The bounds of a weft.slice over a length (null: the ends); steps other than 1 are refused. */
function bounds(sl: Slice | undefined, length: TensorVariable, where: string): [Bound, Bound] {
  if (sl === undefined) return [0, length];
  if (!(sl instanceof Slice)) throw new TypeError(`${where}: expected a weft.slice, got ${String(sl)}`);
  if (sl.step !== null && sl.step !== undefined && sl.step !== 1) throw new RangeError(`${where}: only steps of 1 are supported, got ${String(sl.step)}`);
  return [sl.start ?? 0, sl.stop ?? length];
}

/** `weft.sparse.get(s, rows, cols?)`: a block given by weft.slice bounds (rows 1:3 is `weft.slice(1, 3)`). */
export function get(s: unknown, rows: Slice, cols?: Slice): SparseVariable {
  const v = asSparseVariable(s, 'sparse.get: input 0');
  const [r0, r1] = bounds(rows, sparseLength(v, 0), 'sparse.get: rows');
  const [c0, c1] = bounds(cols, sparseLength(v, 1), 'sparse.get: columns');
  return getBlock(v, r0, r1, c0, c1);
}

/** `weft.sparse.vstack(blocks, { format? })`: joined along the rows (format: the first block's by default). */
export function vstack(blocks: readonly unknown[], options: { readonly format?: SparseFormat } = {}): SparseVariable {
  const first = asSparseVariable(blocks[0], 'sparse.vstack: input 0');
  return new Stack(0, options.format ?? first.format).call(...blocks) as SparseVariable;
}

/** `weft.sparse.hstack(blocks, { format? })`: joined along the columns. */
export function hstack(blocks: readonly unknown[], options: { readonly format?: SparseFormat } = {}): SparseVariable {
  const first = asSparseVariable(blocks[0], 'sparse.hstack: input 0');
  return new Stack(1, options.format ?? first.format).call(...blocks) as SparseVariable;
}

bindOps({ get });
