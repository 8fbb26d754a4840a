// Shape lifting: the length of an axis of f(x) is computed from x's shape through the ops'
// inferShape (the ShapeFeature), so that asking for a shape never computes the tensor.
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { registerCanonicalize } from '../../graph/rewriting/optdb.js';
import { makeVector } from '../make-vector.js';
import { Shape, ShapeI } from '../shape.js';
import type { TensorVariable } from '../variable.js';
import { shapeFeatureOf } from './shape-feature.js';

registerCanonicalize(
  nodeRewriter('shape_i_lift', [ShapeI], (node, fg) => {
    const x = node.inputs[0]!;
    if (!x.owner) return false;
    const dim = shapeFeatureOf(fg).shapeOf(x)[(node.op as ShapeI).i]!;
    if (dim.owner?.op instanceof ShapeI && dim.owner.inputs[0] === x) return false;
    return [dim];
  }),
  'shape_lift',
);

registerCanonicalize(
  nodeRewriter('shape_to_make_vector', [Shape], (node, fg) => {
    const x = node.inputs[0] as TensorVariable;
    const dims = shapeFeatureOf(fg).shapeOf(x);
    if (dims.length === 0) return false;
    return [makeVector(...dims)];
  }),
  'shape_lift',
);
