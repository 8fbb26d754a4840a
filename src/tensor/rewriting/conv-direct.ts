// Forward convolutions for the direct WebAssembly kernel (kernels/conv-wasm.ts), which reads a
// contiguous float32 image in place with unit strides and dilation and no padding: a padded
// convolution becomes a valid one over the image copied into zeros (PyTensor pads the same way
// in its CorrMM), and one over a view gets the view copied. The zeros are summed as im2col sums
// them, so the bits are those of im2col + gemm; the copy is one pass over the image, where the
// patches are KH*KW of them. Tag 'conv_direct'.
import { registerSpecialize } from '../../graph/rewriting/optdb.js';
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { add, cast, intDiv, mul, sub } from '../elemwise/math.js';
import { slice } from '../core/slice.js';
import type { TensorVariable } from '../core/variable.js';
import { Conv2d } from '../nnet/conv.js';
import { alloc } from '../shape/alloc.js';
import { Reshape } from '../shape/reshape.js';
import { get, setSubtensor } from '../shape/subtensor.js';
import { shapeI, shapeOf } from '../shape/shape.js';
import { asTypeOf } from './like.js';

/** Whether the forward convolution is the direct kernel's, once padded: float32 with unit strides and dilation. */
export function takesDirectKernel(op: Conv2d, x: TensorVariable, w: TensorVariable): boolean {
  const p = op.params;
  return x.type.dtype === 'float32' && w.type.dtype === 'float32' && p.stride[0] === 1 && p.stride[1] === 1 && p.dilation[0] === 1 && p.dilation[1] === 1;
}

/** The zeros before and after the rows and the columns: numbers where they are known. */
function paddingOf(op: Conv2d, w: TensorVariable): [TensorVariable | number, TensorVariable | number] {
  const p = op.params;
  const along = (axis: 2 | 3, given: number): TensorVariable | number => {
    const k = w.type.shape[axis];
    switch (p.border) {
      case 'valid': return 0;
      case 'explicit': return given;
      case 'full': return k != null ? k - 1 : sub(shapeI(w, axis), 1);
      case 'half': return k != null ? Math.floor(k / 2) : intDiv(shapeI(w, axis), 2);
    }
  };
  return [along(2, p.pad[0]), along(3, p.pad[1])];
}

const convPadDirect = nodeRewriter('local_conv2d_pad_direct', [Conv2d], (node, fg) => {
  const op = node.op as Conv2d;
  const [x, w] = node.inputs as TensorVariable[];
  if (!takesDirectKernel(op, x!, w!)) return false;
  const [ph, pw] = paddingOf(op, w!);
  // A view may be strided (a transposition from NHWC); a reshape's view is contiguous.
  const aView = x!.owner !== null && Object.keys(x!.owner.op.viewMap).length > 0 && !(x!.owner.op instanceof Reshape);
  if (ph === 0 && pw === 0 && !aView) return false;
  const [n, c, h, wd] = shapeOf(x!) as [TensorVariable, TensorVariable, TensorVariable, TensorVariable];
  const grown = (length: TensorVariable, p: TensorVariable | number): TensorVariable => (p === 0 ? length : add(length, typeof p === 'number' ? 2 * p : mul(p, 2)));
  const inside = (length: TensorVariable, p: TensorVariable | number) => slice(p, p === 0 ? length : add(p, length));
  const zeros = alloc(cast(0, 'float32'), n, c, grown(h, ph), grown(wd, pw));
  const padded = setSubtensor(get(zeros, slice(null, null), slice(null, null), inside(h, ph), inside(wd, pw)), x!);
  const valid = new Conv2d('explicit', [0, 0], [1, 1], [1, 1], op.groups, op.flip).call(padded, w!) as TensorVariable;
  const r = asTypeOf(valid, node.outputs[0] as TensorVariable, fg);
  return r ? [r] : false;
});

registerSpecialize(convPadDirect, 'conv_direct', convPadDirect.name);
