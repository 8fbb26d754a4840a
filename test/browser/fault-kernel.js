// A user's kernel module for the browser test: the pool's Web Workers import it at start
// (createPool({ kernelModules })); it registers into the registry of weft's browser bundle.
import { registerKernel } from '/dist/browser/kernels.js';

registerKernel('test.throw', () => {
  throw new Error('boom from a kernel');
});

registerKernel('test.double', (ins, outs) => {
  const [x] = ins;
  const [o] = outs;
  const n = o.shape.reduce((a, b) => a * b, 1);
  for (let i = 0; i < n; i++) o.data[o.offset + i] = 2 * x.data[x.offset + i];
});
