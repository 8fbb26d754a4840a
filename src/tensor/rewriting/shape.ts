// Shape lifting: the length of an axis of f(x) is computed from x's shape through the ops'
// inferShape (the ShapeFeature), so that asking for a shape never computes the tensor; and
// x.shape[i] reads the length directly instead of building the whole shape vector.
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { registerCanonicalize } from '../../graph/rewriting/optdb.js';
import { MakeVector, makeVector } from '../shape/make-vector.js';
import { cast } from '../elemwise/math.js';
import { constantScalar, Shape, ShapeI } from '../shape/shape.js';
import { Subtensor } from '../shape/subtensor.js';
import type { TensorVariable } from '../core/variable.js';
import { shapeFeatureOf } from './shape-feature.js';

registerCanonicalize(
  nodeRewriter('shape_i_lift', [ShapeI], (node, fg) => {
    const x = node.inputs[0]!;
    if (!x.owner) return false;
    const dim = shapeFeatureOf(fg).shapeOf(x)[(node.op as ShapeI).i]!;
    if (dim.owner?.op instanceof ShapeI && dim.owner.inputs[0] === x) return false;
    // Shape_i gives int32; an op's inferShape may compute a length in another integer dtype.
    return [cast(dim, 'int32')];
  }),
  'shape_lift',
);

registerCanonicalize(
  nodeRewriter('shape_to_make_vector', [Shape], (node, fg) => {
    const x = node.inputs[0] as TensorVariable;
    // A 0-d tensor has the empty shape, whatever computes it.
    if (x.ndim === 0) return [makeVector()];
    return [cast(makeVector(...shapeFeatureOf(fg).shapeOf(x)), 'int32')];
  }),
  'shape_lift',
);

/** MakeVector(a, b, c)[k] -> the k-th scalar, for a constant k in range (x.shape[0] -> Shape_i). */
registerCanonicalize(
  nodeRewriter('subtensor_of_make_vector', [Subtensor], (node) => {
    const op = node.op as Subtensor;
    const [v, index] = node.inputs;
    if (op.idxList.length !== 1 || op.idxList[0] !== 'int' || !(v?.owner?.op instanceof MakeVector)) return false;
    const n = v.owner.inputs.length;
    const k = constantScalar(index!);
    if (k === undefined || k < -n || k >= n) return false;
    return [v.owner.inputs[k < 0 ? k + n : k]!];
  }),
  'shape_lift',
);
