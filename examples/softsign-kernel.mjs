// The worker kernel of examples/custom-op.ts: softsign(x) = x / (1 + |x|), element by element over
// views of shared memory. Every worker of the pool (and the calling thread) imports this module
// (createPool({ kernelModules })); it may import nothing but weft/kernels.
import { registerKernel } from 'weft/kernels';

registerKernel('examples.softsign', ([x], [out], _params, range) => {
  // The op asks for a contiguous x (contiguousInputs), so element i of x is at x.offset + i.
  const n = out.shape.reduce((a, b) => a * b, 1);
  for (let i = range?.start ?? 0, end = range?.end ?? n; i < end; i++) {
    const v = x.data[x.offset + i];
    out.data[out.offset + i] = v / (1 + Math.abs(v));
  }
});
