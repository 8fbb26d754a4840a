// Registers weft's own kernels under their names. Workers import this module; so does the
// calling thread, which runs the same kernels when it executes a plan inline.
// The kernel families register themselves as they load: copies, reductions, joins and creation
// (builtin-core), products (matmul, tensordot, gemm), incSubtensor, the softmax family, and
// kernels given as source. Element-wise loops register here.
import './builtin-core.js';
import './conv.js';
import './cumulate.js';
import './decompositions.js';
import './distributions.js';
import './vector-distributions.js';
import './dense-linalg.js';
import './im2col.js';
import './gather.js';
import './sorting.js';
import './inc-subtensor.js';
import './inplace.js';
import './pool.js';
import './products.js';
import './softmax.js';
import './sparse.js';
import './source-kernel.js';
import { runElemwise, type ElemwiseSource } from './elemwise.js';
import { runProgram } from './elemwise-wasm.js';
import { registerKernel } from './registry.js';
import { broadcastView, type TensorView } from './view.js';

registerKernel('elemwise', (ins, outs, params, range) => {
  const shape = outs[0]!.shape;
  const source = params['source'] as ElemwiseSource;
  const inputs = ins.map((v) => broadcastView(v, shape));
  // The WebAssembly loop where it applies (same bits), else the JS loop; the JS loop also takes
  // the blocks the wasm loop leaves to it (arguments beyond a math function's limit).
  const js = (start: number, end: number): void => runElemwise(source, inputs, outs, { start, end });
  if (source.program && outs.length === 1 && runProgram(source.program, inputs, outs[0]!, range, js)) return;
  runElemwise(source, inputs, outs, range);
});
