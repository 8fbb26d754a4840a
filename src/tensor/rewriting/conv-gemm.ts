// Convolutions as matrix products (PyTensor's local_abstractconv_gemm and its two gradient
// twins, which give CorrMM): im2col lays each image's patches out as a [Cg*KH*KW, HO*WO] matrix
// per group, and then conv2d is filters · patches, the filters' gradient gz · patches^T summed
// image by image and summed over the batch, and the input's gradient col2im(filters^T · gz). The products run on the SIMD
// gemm, split over the team; measured in bench W9 against the direct kernels (tag 'conv_gemm':
// `excluding: ['conv_gemm']` keeps the direct ones). The patches take Cg*KH*KW times the memory
// of the output's spatial positions, per image.
import type { FunctionGraph } from '../../graph/fgraph.js';
import { registerSpecialize } from '../../graph/rewriting/optdb.js';
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import type { TensorVariable } from '../core/variable.js';
import { mul } from '../elemwise/math.js';
import { sum } from '../elemwise/reduce.js';
import { matmul } from '../linalg/linalg.js';
import { Conv2d, Conv2dGradFilters, Conv2dGradInputs, type ConvOp } from '../nnet/conv.js';
import { col2im, im2col } from '../nnet/im2col.js';
import { swapaxes } from '../shape/axes.js';
import { reshape } from '../shape/reshape.js';
import { shapeI, shapeOf } from '../shape/shape.js';
import { takesDirectKernel } from './conv-direct.js';
import { asTypeOf, lengthsOf } from './like.js';

/** The filters [O, Cg, KH, KW] as one matrix per group: [groups, O / groups, Cg * KH * KW]. */
function filterMatrices(op: ConvOp, w: TensorVariable): TensorVariable {
  return reshape(w, [op.groups, -1, mul(mul(shapeI(w, 1), shapeI(w, 2)), shapeI(w, 3))]);
}

/** The output gradient [N, O, HO, WO] as [N, groups, O / groups, HO * WO] (a view). */
function outputMatrices(op: ConvOp, gz: TensorVariable): TensorVariable {
  return reshape(gz, [shapeI(gz, 0), op.groups, -1, mul(shapeI(gz, 2), shapeI(gz, 3))]);
}

function replacing(v: TensorVariable, out: TensorVariable, fg: FunctionGraph): TensorVariable[] | false {
  const r = asTypeOf(v, out, fg);
  return r ? [r] : false;
}

const convGemm = nodeRewriter('local_abstractconv_gemm', [Conv2d], (node, fg) => {
  const op = node.op as Conv2d;
  const [x, w] = node.inputs as TensorVariable[];
  // float32 with unit strides and dilation: the direct kernel's (conv-direct.ts), padded if need be.
  if (takesDirectKernel(op, x!, w!)) return false;
  const out = node.outputs[0] as TensorVariable;
  const dims = lengthsOf(out, fg);
  if (!dims) return false;
  // [groups, Og, K] · [N, groups, K, P] = [N, groups, Og, P], which is [N, O, HO, WO] in C order.
  const y = matmul(filterMatrices(op, w!), im2col(op, x!, w!));
  return replacing(reshape(y, dims), out, fg);
});

const gradFiltersGemm = nodeRewriter('local_abstractconv_gradweights_gemm', [Conv2dGradFilters], (node, fg) => {
  const op = node.op as Conv2dGradFilters;
  const [x, gz, w] = node.inputs as TensorVariable[];
  // One product per image, [groups, Og, P] · [groups, P, K], summed over the images in order:
  // the team splits the products' rows, where one [Og, N*P] · [N*P, K] product has few rows.
  const perImage = matmul(outputMatrices(op, gz!), swapaxes(im2col(op, x!, w!), 2, 3));
  return replacing(reshape(sum(perImage, { axis: 0 }), shapeOf(w!)), node.outputs[0] as TensorVariable, fg);
});

const gradInputsGemm = nodeRewriter('local_abstractconv_gradinputs_gemm', [Conv2dGradInputs], (node, fg) => {
  const op = node.op as Conv2dGradInputs;
  const [w, gz, x] = node.inputs as TensorVariable[];
  // [groups, K, Og] · [N, groups, Og, P] = the patches' gradient, summed back into images.
  const dcols = matmul(swapaxes(filterMatrices(op, w!), 1, 2), outputMatrices(op, gz!));
  return replacing(col2im(op, dcols, x!, w!), node.outputs[0] as TensorVariable, fg);
});

for (const r of [convGemm, gradFiltersGemm, gradInputsGemm]) registerSpecialize(r, 'conv_gemm', r.name);
