// The chunk arithmetic of the kernel contract (src/scheduler/chunking.ts), which the planner,
// DebugMode and the kernel tests share, and the planner's use of a call's `contracted` axes: a
// product is cut by its multiply-adds, an element-wise call by the elements it touches.
import t from 'tap';
import { chunkRanges, chunkUnits } from '../../src/scheduler/chunking.js';
import { PlannedExecutor } from '../../src/scheduler/planned-executor.js';
import { PRODUCT_TASK_WORK, TASK_WORK } from '../../src/scheduler/plan.js';
import { pt, rng, weft } from '../helpers.js';

t.test('chunkUnits counts elements, rows, lanes or one unit', async (t) => {
  const shape = [3, 4, 5];
  t.equal(chunkUnits({ by: 'elements' }, shape), 60);
  t.equal(chunkUnits({ by: 'rows' }, shape), 3);
  t.equal(chunkUnits({ by: 'lanes', axis: 1 }, shape), 15, 'lanes along axis 1: every index of the other axes');
  t.equal(chunkUnits({ by: 'lanes', axis: 2 }, shape), 12);
  t.equal(chunkUnits({ by: 'none' }, shape), 1);
  t.equal(chunkUnits({ by: 'rows' }, []), 1, 'a 0-d output is one row');
  t.equal(chunkUnits({ by: 'elements' }, [0, 4]), 0);
});

t.test('chunkRanges cuts units into ranges of ceil(units / chunks), none empty', async (t) => {
  t.same(chunkRanges(10, 3), [
    { start: 0, end: 4 },
    { start: 4, end: 8 },
    { start: 8, end: 10 },
  ]);
  t.same(chunkRanges(10, 4).length, 4, '3 + 3 + 3 + 1');
  t.same(chunkRanges(9, 4).map((r) => r.end - r.start), [3, 3, 3], 'fewer ranges than chunks when the last would be empty');
  t.same(chunkRanges(5, 10).map((r) => r.end - r.start), [1, 1, 1, 1, 1], 'at most one range per unit');
  t.same(chunkRanges(0, 3), [], 'no units, no ranges');
  t.same(chunkRanges(7, 1), [{ start: 0, end: 7 }]);
  for (const [units, chunks] of [
    [1000, 7],
    [4096, 64],
    [33, 32],
  ] as const) {
    const ranges = chunkRanges(units, chunks);
    const covered = ranges.every((r, i) => r.start === (i === 0 ? 0 : ranges[i - 1]!.end) && r.end > r.start);
    t.ok(covered && ranges[ranges.length - 1]!.end === units && ranges.length <= chunks, `${units} units in ${chunks}: consecutive, covering, non-empty`);
  }
});

t.test('a product is cut by its multiply-adds (contracted axes), not by the elements it touches', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.matrix('x', 'float32');
  const y = pt.matrix('y', 'float32');
  const fn = await weft.compile([x, y], [x.dot(y), x.dot(y).exp()], { pool });
  const r = rng(5);
  const values = [r.normal([2048, 2], { dtype: 'float32' }), r.normal([2, 2048], { dtype: 'float32' })] as const;
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  t.teardown(() => executor.dispose());
  const { plan } = executor.planFor(values);
  const d = plan.descriptor;
  const tasksOf = (kernel: string) => {
    const calls = d.calls.flatMap((c, i) => (c.kernel.startsWith(kernel) ? [i] : []));
    t.equal(calls.length, 1, `one ${kernel} call`);
    return d.tasks.filter((task) => task.call === calls[0]).length;
  };
  // The product: 2048 * 2048 outputs, each a sum over 2: 8M multiply-adds, PRODUCT_TASK_WORK a task.
  t.equal(tasksOf('matmul'), (2048 * 2048 * 2) / PRODUCT_TASK_WORK, `the product: ${(2048 * 2048 * 2) / PRODUCT_TASK_WORK} tasks of ${PRODUCT_TASK_WORK} multiply-adds`);
  // The exp touches 4M elements: TASK_WORK elements a task.
  t.equal(tasksOf('elemwise'), (2048 * 2048) / TASK_WORK, `the exp: ${(2048 * 2048) / TASK_WORK} tasks of ${TASK_WORK} elements`);
  const [z] = (await fn(...values)) as weft.NdArray[];
  const [x0, y0] = [values[0].data, values[1].data];
  const want = x0[10]! * y0[7]! + x0[11]! * y0[2048 + 7]!;
  t.ok(Math.abs(z!.data[5 * 2048 + 7]! - want) <= 1e-6 * (1 + Math.abs(want)), 'and the product is right');
});

t.test('kernels with a WebAssembly path write their outputs in the arena (copied out after the call); the others straight into the caller\'s memory', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const r = rng(6);
  for (const dtype of ['float32', 'float64'] as const) {
    const x = pt.matrix('x', dtype);
    const y = pt.matrix('y', dtype);
    // 1024 x 512 outputs: 2 or 4 MiB, over the size that outputs are written straight into the
    // caller's memory. The float32 gemm and the exp (a WebAssembly program) need the arena; the
    // float64 gemm (JS) and gammaln (no WebAssembly form) do not.
    const p = x.dot(y);
    const fn = await weft.compile([x, y], [p, p.exp(), pt.special.gammaln(p.abs().add(1))], { pool });
    const values = [r.normal([1024, 2], { dtype }), r.normal([2, 512], { dtype })] as const;
    const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
    t.teardown(() => executor.dispose());
    const { plan } = executor.planFor(values);
    const movable = plan.descriptor.movableOutputs.map((m) => m.output);
    t.same(movable, dtype === 'float32' ? [2] : [0, 2], `${dtype}: the outputs written straight into the caller's memory`);
    const [prod, e, g] = (await fn(...values)) as weft.NdArray[];
    const xs = values[0].data;
    const ys = values[1].data;
    const at = (i: number, j: number): number => xs[i * 2]! * ys[j]! + xs[i * 2 + 1]! * ys[512 + j]!;
    const tol = dtype === 'float32' ? 1e-5 : 1e-12;
    const worst = Math.max(...[0, 1, 511, 513, 1024 * 512 - 1].map((k) => Math.abs(prod!.data[k]! - at(Math.floor(k / 512), k % 512))));
    t.ok(worst < tol, `${dtype}: the product is right (worst ${worst})`);
    t.ok(Math.abs(e!.data[7]! - Math.exp(prod!.data[7]!)) <= tol * Math.exp(Math.abs(prod!.data[7]!)), `${dtype}: its exp`);
    // log gamma on [1, inf) is at least its minimum, log gamma(1.4616...) = -0.1215...
    t.ok(Number.isFinite(g!.data[7]!) && g!.data[7]! > -0.1216, `${dtype}: its gammaln (${g!.data[7]})`);
  }
});

t.test('a product with few rows (an RNN step: 64 x 512 times 512 x 512) is cut by columns, with the bits of one task', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const r = rng(11);
  for (const dtype of ['float32', 'float64'] as const) {
    const h = pt.matrix('h', dtype);
    const w = pt.matrix('w', dtype);
    const v = pt.matrix('v', dtype);
    const z = pt.matrix('z', dtype);
    // A dot, and a gemm (z + h . v, fused by the rewrites), with 1000 columns: not a multiple of the cut.
    const outs = [h.dot(w), z.add(h.dot(v))];
    const values = [r.normal([64, 512], { dtype }), r.normal([512, 1000], { dtype }), r.normal([512, 1000], { dtype }), r.normal([64, 1000], { dtype })] as const;
    const fn = await weft.compile([h, w, v, z], outs, { pool, workers: 2 });
    const inline = await weft.compile([h, w, v, z], outs, { workers: 0 });
    const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
    t.teardown(() => executor.dispose());
    const d = executor.planFor(values).plan.descriptor;
    const products = d.calls.flatMap((c, i) => (c.kernel === 'matmul' || c.kernel.startsWith('gemm') ? [i] : []));
    t.ok(products.length >= 2, `${dtype}: ${products.length} product calls`);
    for (const call of products) {
      const tasks = d.tasks.filter((task) => task.call === call);
      t.same(d.calls[call]!.split, { by: 'lanes' }, `${dtype}: ${d.calls[call]!.kernel} is cut by lanes (columns)`);
      // 32M multiply-adds would make 16 tasks; at least 64 columns a task (the gemm's panel) make 15.
      const chunks = Math.min(Math.floor(1000 / 64), Math.round((64 * 512 * 1000) / PRODUCT_TASK_WORK));
      t.same(tasks.map((task) => ({ start: task.start, end: task.end })), chunkRanges(1000, chunks), `${dtype}: ${d.calls[call]!.kernel} in ${chunks} tasks of columns`);
    }
    const got = (await fn(...values)) as weft.NdArray[];
    const want = (await inline(...values)) as weft.NdArray[];
    got.forEach((g, i) => t.ok(Buffer.from(g.data.buffer, g.data.byteOffset, g.data.byteLength).equals(Buffer.from(want[i]!.data.buffer, want[i]!.data.byteOffset, want[i]!.data.byteLength)), `${dtype}: output ${i} has the bits of the inline call`));
    const hs = values[0].data;
    const ws = values[1].data;
    const at = (i: number, j: number): number => {
      let s = 0;
      for (let p = 0; p < 512; p++) s += hs[i * 512 + p]! * ws[p * 1000 + j]!;
      return s;
    };
    const worst = Math.max(...[0, 63, 999, 64 * 1000 - 1, 31 * 1000 + 640].map((k) => Math.abs(got[0]!.data[k]! - at(Math.floor(k / 1000), k % 1000))));
    t.ok(worst < (dtype === 'float32' ? 1e-3 : 1e-10), `${dtype}: the product is right (worst ${worst})`);
  }
});

t.test('a reduction (or argmax) over the rows of a matrix reads runs of up to 4 KiB of each row (at least 256 elements, and 4 tasks while the columns allow), with the bits of one task', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const r = rng(17);
  // [kind, dtype, shape, reduced axis, the elements of the output each task takes]
  const cases = [
    // 4096 float32 columns: runs of 1024 (4 KiB), four tasks (runs of 256 made sixteen).
    ['sum', 'float32', [512, 4096], 0, 1024],
    ['max', 'float32', [512, 4096], 0, 1024],
    ['argmax', 'float32', [512, 4096], 0, 1024],
    // float64: 512 elements make 4 KiB (runs of 256 made eight tasks).
    ['sum', 'float64', [1024, 2048], 0, 512],
    // 1000 columns: a quarter is under 256, so runs of 256 (three tasks, the last shorter), as before.
    ['sum', 'float32', [2048, 1000], 0, 256],
    // Kept axes around a reduced one: runs over the flat output, 4 KiB at least (16 tasks, not
    // 64), a task crossing from one index of the first axis to the next.
    ['sum', 'float32', [4, 512, 4097], 1, 1024],
  ] as const;
  for (const [kind, dtype, shape, axis, run] of cases) {
    const x = pt.tensor({ name: 'x', dtype, shape: shape.map(() => null) });
    const y = kind === 'sum' ? x.sum({ axis }) : kind === 'max' ? x.max({ axis }) : x.argmax({ axis });
    const value = r.normal([...shape], { dtype });
    const fn = await weft.compile([x], y, { pool, workers: 2 });
    const inline = await weft.compile([x], y, { workers: 0 });
    const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
    t.teardown(() => executor.dispose());
    const d = executor.planFor([value]).plan.descriptor;
    const kernel = kind === 'argmax' ? 'argreduce' : 'reduce';
    const calls = d.calls.flatMap((c, i) => (c.kernel === kernel ? [i] : []));
    t.equal(calls.length, 1, `${kind} ${dtype} [${shape}]: one ${kernel} call`);
    const outputs = shape.reduce((n, s, a) => (a === axis ? n : n * s), 1);
    const size = shape.reduce((n, s) => n * s, 1);
    const chunks = Math.min(Math.floor(outputs / run), Math.round(size / TASK_WORK));
    const tasks = d.tasks.filter((task) => task.call === calls[0]);
    t.same(tasks.map((task) => ({ start: task.start, end: task.end })), chunkRanges(outputs, chunks), `${kind} ${dtype} [${shape}] over axis ${axis}: ${chunks} tasks of at least ${run} outputs`);
    const got = ((await fn(value)) as weft.NdArray).data;
    const want = ((await inline(value)) as weft.NdArray).data;
    t.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want.buffer, want.byteOffset, want.byteLength)), `${kind} ${dtype} [${shape}]: the bits of the inline call`);
    // Each output element folds its rows in row order, in float64, rounded once to the dtype
    // (argmax: the first row holding the maximum).
    const [outer, rows, inner] = axis === 0 ? [1, shape[0], shape[1]!] : [shape[0], shape[1]!, shape[2]!];
    const round = dtype === 'float32' ? Math.fround : (v: number) => v;
    let mismatches = 0;
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < inner; j++) {
        let acc = kind === 'sum' ? 0 : -Infinity;
        let first = -1;
        for (let i = 0; i < rows; i++) {
          const v = value.data[(o * rows + i) * inner + j]!;
          if (v > acc) first = i;
          acc = kind === 'sum' ? acc + v : Math.max(acc, v);
        }
        if (!Object.is(kind === 'argmax' ? first : round(acc), got[o * inner + j])) mismatches++;
      }
    }
    t.equal(mismatches, 0, `${kind} ${dtype} [${shape}]: every output is the row-order fold of its column`);
  }
  // A transposed input's last axis is strided: longer runs would gain nothing, so runs stay 256.
  const x = pt.matrix('x', 'float32');
  const y = x.T.sum({ axis: 0 });
  const value = r.normal([4096, 512], { dtype: 'float32' });
  const fn = await weft.compile([x], y, { pool, workers: 2 });
  const inline = await weft.compile([x], y, { workers: 0 });
  const executor = new PlannedExecutor(fn.fgraph, () => pool, { workers: 2 });
  t.teardown(() => executor.dispose());
  const d = executor.planFor([value]).plan.descriptor;
  const reduce = d.calls.findIndex((c) => c.kernel === 'reduce');
  t.same(d.views[d.calls[reduce]!.inputs[0]!]!.stride, [1, 512], 'x.T.sum({ axis: 0 }) reduces the strided view');
  t.equal(d.tasks.filter((task) => task.call === reduce).length, 16, 'in 16 tasks of 256 outputs');
  const got = ((await fn(value)) as weft.NdArray).data;
  const want = ((await inline(value)) as weft.NdArray).data;
  t.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want.buffer, want.byteOffset, want.byteLength)), 'with the bits of the inline call');
});
