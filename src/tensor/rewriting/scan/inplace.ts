// ScanInplaceOptimizer (Theano's, in the inplace phase): a loop's worker kernel reads each step's
// rows (sequence rows, past states, non-sequences) and writes the step's results straight into
// its rows of the stacked outputs, instead of copying them in and out of the step's memory. No
// outer input is overwritten (the loop writes only its own outputs), so the destroy handler has
// no ordering to add; a step input that the step's own inplace ops overwrite is copied in as before.
import { nodeRewriter } from '../../../graph/rewriting/rewriter.js';
import { ScanOp } from '../../inner/scan-op.js';

export const scanInplaceOptimizer = nodeRewriter('ScanInplaceOptimizer', [ScanOp], (node) => {
  const op = node.op as ScanOp;
  if (op.spec.inplace) return false;
  return new ScanOp(op.inner, { ...op.spec, inplace: true }, op.name).makeNode(...node.inputs).outputs;
});
