// Kernels of the inplace machinery: 'gemmInplace' (Gemm writing into z itself: its output IS z,
// so nothing is copied first) and 'allocEmpty' (AllocEmpty: memory that the next node writes
// entirely, so the kernel has nothing to do). builtin.ts imports this module.
import { gemm } from './gemm.js';
import { columnRange, columnsOf } from './products.js';
import { registerKernel } from './registry.js';

/** out (= z) = beta * z + alpha * x . y with inputs (z, alpha, x, y, beta), by rows (or columns) of out. */
registerKernel('gemmInplace', (ins, outs, params, range) => {
  const [, a, x, y, b] = ins;
  const columns = columnRange(params, range);
  if (columns) return gemm(x!, columnsOf(y!, columns), columnsOf(outs[0]!, columns), a!.data[a!.offset]!, b!.data[b!.offset]!);
  gemm(x!, y!, outs[0]!, a!.data[a!.offset]!, b!.data[b!.offset]!, range);
});

/** Inputs (...lengths); the output's contents are left as they are. */
registerKernel('allocEmpty', () => {});
