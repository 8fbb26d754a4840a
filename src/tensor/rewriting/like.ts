// Rewrites must hand back a variable of exactly the type of what they replace. `asTypeOf`
// makes a candidate fit: cast to the dtype, broadcast to the static shape, or give up (undefined).
import { broadcastLike } from '../alloc.js';
import { dimshuffle } from '../dimshuffle.js';
import { cast } from '../math.js';
import type { TensorVariable } from '../variable.js';

export function asTypeOf(v: TensorVariable, like: TensorVariable): TensorVariable | undefined {
  let r = cast(v, like.dtype);
  if (r.ndim < like.ndim) r = dimshuffle(r, [...Array<'x'>(like.ndim - r.ndim).fill('x'), ...[...Array(r.ndim).keys()]]);
  if (r.ndim !== like.ndim) return undefined;
  if (r.type.shape.some((d, i) => d === 1 && like.type.shape[i] !== 1)) r = broadcastLike(r, like);
  return like.type.convertVariable(r) ? r : undefined;
}
