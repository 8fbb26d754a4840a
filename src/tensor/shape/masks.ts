// Element-wise masks over index grids: tril and triu (x where the column is at most / at least
// k past the row, over the last two axes), oneHot (1 where the index equals the position), and
// the diagonals: diagonal and trace read them, diag reads or builds one. All are graphs of
// existing ops (arange, comparisons, where, slices of a flattened view), so they fuse, have
// gradients, and run on the workers.
import { isIntDtype, type Dtype } from '../../kernels/dtype.js';
import { asTensorVariable } from '../core/as-tensor.js';
import { config } from '../core/config.js';
import { slice } from '../core/slice.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { add, cast, eq, ge, le, maximum, minimum, mul, sub, where } from '../elemwise/math.js';
import { normalizeAxes, sum } from '../elemwise/reduce.js';
import { alloc } from './alloc.js';
import { arange } from './creation.js';
import { dimshuffle } from './dimshuffle.js';
import { reshape } from './reshape.js';
import { asIntScalar, shapeOf } from './shape.js';
import { get, setSubtensor } from './subtensor.js';

/** The row and column index grids of the last two axes of `v`, as broadcastable int tensors. */
function indexGrids(v: TensorVariable, where: string): [TensorVariable, TensorVariable] {
  if (v.ndim < 2) throw new TypeError(`${where}: expected at least 2 axes, got ${v} (${v.type})`);
  const lengths = shapeOf(v);
  const rows = dimshuffle(arange(lengths[v.ndim - 2]!), [0, 'x']);
  const cols = dimshuffle(arange(lengths[v.ndim - 1]!), ['x', 0]);
  return [rows, cols];
}

/** The lower triangle of the last two axes: x where column <= row + k, else 0 (NumPy's tril). */
export function tril(x: TensorLike, k: number | TensorVariable = 0): TensorVariable {
  const v = asTensorVariable(x);
  const [rows, cols] = indexGrids(v, 'tril');
  return where(le(sub(cols, rows), asIntScalar(k, 'tril: k')), v, 0);
}

/** The upper triangle of the last two axes: x where column >= row + k, else 0 (NumPy's triu). */
export function triu(x: TensorLike, k: number | TensorVariable = 0): TensorVariable {
  const v = asTensorVariable(x);
  const [rows, cols] = indexGrids(v, 'triu');
  return where(ge(sub(cols, rows), asIntScalar(k, 'triu: k')), v, 0);
}

export interface OneHotOptions {
  /** The output's dtype (default config.floatX). */
  readonly dtype?: Dtype;
}

/** A new last axis of length `depth`: 1 where its position equals the index, else 0 (indices out of range give a row of zeros). */
export function oneHot(indices: TensorLike, depth: number | TensorVariable, options: OneHotOptions = {}): TensorVariable {
  const v = asTensorVariable(indices);
  if (!isIntDtype(v.dtype)) throw new TypeError(`oneHot: the indices must be integers, got ${v} (${v.type})`);
  const positions = arange(asIntScalar(depth, 'oneHot: depth'));
  const column = dimshuffle(v, [...Array(v.ndim).keys(), 'x']);
  return cast(eq(column, positions), options.dtype ?? config.floatX);
}

export interface DiagonalOptions {
  /** Which diagonal: 0 the main one, above it positive, below it negative. */
  readonly offset?: number;
  readonly axis1?: number;
  readonly axis2?: number;
}

/**
 * The diagonal of the 2-d slices of axes axis1 and axis2 (NumPy's diagonal), as a new last axis:
 * those two axes moved last and flattened, then every (columns + 1)-th element from the offset's start.
 */
export function diagonal(x: TensorLike, options: DiagonalOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  if (v.ndim < 2) throw new TypeError(`diagonal: expected at least 2 axes, got ${v} (${v.type})`);
  const offset = options.offset ?? 0;
  if (!Number.isInteger(offset)) throw new TypeError(`diagonal: offset must be an integer, got ${offset}`);
  const [a1] = normalizeAxes(options.axis1 ?? 0, v.ndim, 'diagonal');
  const [a2] = normalizeAxes(options.axis2 ?? 1, v.ndim, 'diagonal');
  if (a1 === a2) throw new RangeError(`diagonal: axis1 and axis2 are both axis ${a1}; they must differ`);
  const rest = [...Array(v.ndim).keys()].filter((a) => a !== a1 && a !== a2);
  const moved = dimshuffle(v, [...rest, a1!, a2!]);
  const lengths = shapeOf(moved);
  const [n, m] = [lengths[v.ndim - 2]!, lengths[v.ndim - 1]!];
  const flat = reshape(moved, [...rest.map((_, i) => lengths[i]!), mul(n, m)]);
  // The diagonal's length, and where it starts in the flattened rows-by-columns block.
  const count = maximum(0, offset >= 0 ? minimum(n, sub(m, offset)) : minimum(add(n, offset), m));
  const start = offset >= 0 ? asIntScalar(offset, 'diagonal') : mul(-offset, m);
  const step = add(m, 1);
  const stop = add(start, mul(count, step));
  return get(flat, ...rest.map(() => slice(null, null)), slice(start, minimum(stop, mul(n, m)), step));
}

/** The sum of the main diagonal (offset 0) of the first two axes, or of the given diagonal. */
export function trace(x: TensorLike, options: DiagonalOptions = {}): TensorVariable {
  return sum(diagonal(x, options), -1);
}

/**
 * NumPy's diag: of a vector, the square matrix with it on diagonal `k` (zeros elsewhere); of a
 * matrix, its diagonal `k`.
 */
export function diag(x: TensorLike, k = 0): TensorVariable {
  const v = asTensorVariable(x);
  if (!Number.isInteger(k)) throw new TypeError(`diag: k must be an integer, got ${k}`);
  if (v.ndim === 2) return diagonal(v, { offset: k });
  if (v.ndim !== 1) throw new TypeError(`diag: expected a vector or a matrix, got ${v} (${v.type})`);
  const size = add(shapeOf(v)[0]!, Math.abs(k));
  const flat = alloc(cast(0, v.dtype), mul(size, size));
  // Diagonal k starts at column k of row 0 (k >= 0), or at row -k of column 0.
  const first = k >= 0 ? asIntScalar(k, 'diag') : mul(-k, size);
  const step = add(size, 1);
  const filled = setSubtensor(get(flat, slice(first, add(first, mul(shapeOf(v)[0]!, step)), step)), v);
  return reshape(filled, [size, size]);
}
