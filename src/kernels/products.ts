// The kernels of the product ops over views of any strides: 'matmul' (NumPy's matmul, which is
// also NumPy's dot for vectors and matrices), 'tensordot' and 'gemm'. They prepare the views
// (vectors promoted to a row or a column, broadcast batch axes, axes collapsed into matrices) and
// run the packed kernels of gemm.ts for a range of output rows; the shapes were checked by the op.
import { copyView } from './copy.js';
import { batchedMatmulInto, gemm, matmulInto, tensordotInto } from './gemm.js';
import { registerKernel, type KernelParams } from './registry.js';
import type { Range, TensorView } from './view.js';

// ---------------------------------------------------------------------------------------------
// matmul: x [..., m, k] (or a vector [k]) times y [..., k, n] (or a vector [k]); out has the
// broadcast batch axes, then m unless x is a vector, then n unless y is a vector.

/** A vector [k] as the row [1, k]. */
function asRow(v: TensorView): TensorView {
  return { data: v.data, offset: v.offset, shape: [1, v.shape[0]!], stride: [0, v.stride[0]!] };
}

/** A vector [k] as the column [k, 1]. */
function asColumn(v: TensorView): TensorView {
  return { data: v.data, offset: v.offset, shape: [v.shape[0]!, 1], stride: [v.stride[0]!, 0] };
}

/** The output with the axes that vector operands dropped put back (length 1, stride 0): [..., m, n]. */
function promotedOutput(out: TensorView, xVector: boolean, yVector: boolean): TensorView {
  if (!xVector && !yVector) return out;
  const shape = [...out.shape];
  const stride = [...out.stride];
  if (xVector) {
    // m sits before n, which is the last axis unless y is a vector too
    const at = yVector ? shape.length : shape.length - 1;
    shape.splice(at, 0, 1);
    stride.splice(at, 0, 0);
  }
  if (yVector) {
    shape.push(1);
    stride.push(0);
  }
  return { data: out.data, offset: out.offset, shape, stride };
}

/** A matrix operand seen with the output's batch axes: missing and length-1 batch axes get stride 0. */
function withBatch(v: TensorView, batch: readonly number[]): TensorView {
  const nd = v.shape.length;
  const lead = batch.length - (nd - 2);
  const stride = batch.map((_, a) => (a < lead || v.shape[a - lead] === 1 ? 0 : v.stride[a - lead]!));
  return {
    data: v.data,
    offset: v.offset,
    shape: [...batch, v.shape[nd - 2]!, v.shape[nd - 1]!],
    stride: [...stride, v.stride[nd - 2]!, v.stride[nd - 1]!],
  };
}

/**
 * NumPy's matmul of two views into `out`, for the rows in `rows` of out seen as one
 * [batch * m, n] matrix (a vector x counts as m = 1, a vector y as n = 1).
 */
export function matmulViews(x: TensorView, y: TensorView, out: TensorView, rows?: Range): void {
  const xVector = x.shape.length === 1;
  const yVector = y.shape.length === 1;
  const a = xVector ? asRow(x) : x;
  const b = yVector ? asColumn(y) : y;
  const c = promotedOutput(out, xVector, yVector);
  const nb = c.shape.length - 2;
  if (nb === 0) return matmulInto(a, b, c, rows);
  const batch = c.shape.slice(0, nb);
  batchedMatmulInto(withBatch(a, batch), withBatch(b, batch), c, rows);
}

// ---------------------------------------------------------------------------------------------
// tensordot (the numeric code is gemm.ts's tensordotInto)

/** What a unit of the tensordot kernel's range is: a row of a's free axes, or an index of a's first free axis. */
export type TensordotUnit = 'row' | 'firstAxis';

/**
 * NumPy's tensordot into a contiguous `out`. `range` counts rows of a's free axes, or indices of
 * its first free axis (`unit`), which are turned into rows.
 */
export function tensordotViews(
  a: TensorView,
  b: TensorView,
  axesA: readonly number[],
  axesB: readonly number[],
  out: TensorView,
  unit: TensordotUnit,
  range?: Range,
): void {
  if (!range || unit === 'row') return tensordotInto(a, b, axesA, axesB, out, range);
  const firstFree = a.shape.findIndex((_, ax) => !axesA.includes(ax));
  let perUnit = 1;
  a.shape.forEach((d, ax) => {
    if (ax > firstFree && !axesA.includes(ax)) perUnit *= d;
  });
  tensordotInto(a, b, axesA, axesB, out, { start: range.start * perUnit, end: range.end * perUnit });
}

// ---------------------------------------------------------------------------------------------
// Tasks by columns: a 2-d product with few rows is cut along n (the planner's 'lanes' of axis 0)

/** Columns [start, end) of a matrix view. */
export function columnsOf(v: TensorView, range: Range): TensorView {
  return { data: v.data, offset: v.offset + range.start * v.stride[1]!, shape: [v.shape[0]!, range.end - range.start], stride: v.stride };
}

/** A call's range when it counts columns of the output (params.columns) rather than rows. */
export const columnRange = (params: KernelParams, range: Range | undefined): Range | undefined => (params['columns'] === true ? range : undefined);

// ---------------------------------------------------------------------------------------------
// Registration

/**
 * out = x . y with NumPy's matmul (and dot for vectors and matrices), by rows of out seen as
 * [batch * m, n], or by columns of a 2-d product.
 */
registerKernel('matmul', (ins, outs, params, range) => {
  const columns = columnRange(params, range);
  if (columns) return matmulInto(ins[0]!, columnsOf(ins[1]!, columns), columnsOf(outs[0]!, columns));
  matmulViews(ins[0]!, ins[1]!, outs[0]!, range);
});

registerKernel('tensordot', (ins, outs, params: KernelParams, range) =>
  tensordotViews(
    ins[0]!,
    ins[1]!,
    params['axesA'] as number[],
    params['axesB'] as number[],
    outs[0]!,
    params['unit'] as TensordotUnit,
    range,
  ),
);

/** out = beta * z + alpha * x . y with inputs (z, alpha, x, y, beta), by rows (or columns) of out. */
registerKernel('gemm', (ins, outs, params, range) => {
  const [z, a, x, y, b] = ins;
  const out = outs[0]!;
  const columns = columnRange(params, range);
  if (columns) {
    const part = columnsOf(out, columns);
    copyView(columnsOf(z!, columns), part);
    return gemm(x!, columnsOf(y!, columns), part, a!.data[a!.offset]!, b!.data[b!.offset]!);
  }
  copyView(z!, out, range && { start: range.start * out.shape[1]!, end: range.end * out.shape[1]! });
  gemm(x!, y!, out, a!.data[a!.offset]!, b!.data[b!.offset]!, range);
});
