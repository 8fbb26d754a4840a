// Rewrites must hand back a variable of exactly the type of what they replace. `asTypeOf`
// makes a candidate fit (cast to the dtype, broadcast to the shape, or give up: undefined), and
// `filledLike` makes a constant fill of a variable's shape. Both take lengths from the graph's
// ShapeFeature, never from the replaced variable itself: a replacement that reads the shape of
// what it replaces keeps the old node alive (and a rewrite that sees that node again loops).
import type { FunctionGraph } from '../../graph/fgraph.js';
import { alloc } from '../shape/alloc.js';
import { constant } from '../core/as-tensor.js';
import { dimshuffle } from '../shape/dimshuffle.js';
import { cast } from '../elemwise/math.js';
import { ShapeI } from '../shape/shape.js';
import type { TensorVariable } from '../core/variable.js';
import { shapeFeatureOf } from './shape-feature.js';

/** The symbolic lengths of `like`, computed from its ancestors; undefined where they need `like` itself. */
export function lengthsOf(like: TensorVariable, fg: FunctionGraph): TensorVariable[] | undefined {
  const dims = shapeFeatureOf(fg).shapeOf(like);
  return dims.some((d) => d.owner?.op instanceof ShapeI && d.owner.inputs[0] === like) ? undefined : dims;
}

export function asTypeOf(v: TensorVariable, like: TensorVariable, fg: FunctionGraph): TensorVariable | undefined {
  let r = cast(v, like.dtype);
  if (r.ndim < like.ndim) r = dimshuffle(r, [...Array<'x'>(like.ndim - r.ndim).fill('x'), ...[...Array(r.ndim).keys()]]);
  if (r.ndim !== like.ndim) return undefined;
  if (r.type.shape.some((d, i) => d === 1 && like.type.shape[i] !== 1)) {
    const dims = lengthsOf(like, fg);
    if (!dims) return undefined;
    r = alloc(r, ...dims);
  }
  return like.type.convertVariable(r) ? r : undefined;
}

/** `value` in every element of a new tensor of `like`'s type and shape. */
export function filledLike(value: number, like: TensorVariable, fg: FunctionGraph): TensorVariable | undefined {
  const dims = lengthsOf(like, fg);
  if (!dims) return undefined;
  const r = alloc(constant(value, { dtype: like.dtype }), ...dims);
  return like.type.convertVariable(r) ? r : undefined;
}
