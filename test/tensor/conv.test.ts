// conv2d (issue 14), after PyTensor's test_abstract_conv.py: values against a direct reference
// written here (zero padding, strides, dilation, groups, flipped or not) for every border mode,
// gradients with respect to the input and the filters (verifyGrad), Rop, inferShape, DebugMode,
// the same bits on 0 and 2 workers, float32, and shapes that do not fit named exactly. Each for
// both forms: the im2col + matrix product rewrite (local_abstractconv_gemm and its gradient
// twins, the default) and the direct kernels (`excluding: ['conv_gemm']`); and second-order
// gradients (the gradients' own gradients, as PyTensor's AbstractConv2d_gradInputs has).
import t from 'tap';
import { Col2Im, Im2Col } from '../../src/tensor/nnet/im2col.js';
import { Conv2d } from '../../src/tensor/nnet/conv.js';
import { pt, rng, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
const r = rng(2236);

interface Case {
  readonly x: readonly number[];
  readonly w: readonly number[];
  readonly border: 'valid' | 'full' | 'half' | readonly [number, number];
  readonly subsample?: readonly [number, number];
  readonly dilation?: readonly [number, number];
  readonly groups?: number;
  readonly flip?: boolean;
}

/** The convolution by its definition, over plain arrays. */
function reference(x: Float64Array, xs: readonly number[], w: Float64Array, ws: readonly number[], c: Case): { data: number[]; shape: number[] } {
  const [N, C, H, W] = xs as [number, number, number, number];
  const [O, Cg, KH, KW] = ws as [number, number, number, number];
  const [sh, sw] = c.subsample ?? [1, 1];
  const [dh, dw] = c.dilation ?? [1, 1];
  const groups = c.groups ?? 1;
  const flip = c.flip ?? true;
  const [eh, ew] = [(KH - 1) * dh + 1, (KW - 1) * dw + 1];
  const [ph, pw] = c.border === 'valid' ? [0, 0] : c.border === 'full' ? [eh - 1, ew - 1] : c.border === 'half' ? [Math.floor(eh / 2), Math.floor(ew / 2)] : c.border;
  const HO = Math.floor((H + 2 * ph - eh) / sh) + 1;
  const WO = Math.floor((W + 2 * pw - ew) / sw) + 1;
  const out: number[] = [];
  for (let n = 0; n < N; n++) for (let o = 0; o < O; o++) for (let i = 0; i < HO; i++) for (let j = 0; j < WO; j++) {
    const g = Math.floor(o / (O / groups));
    let s = 0;
    for (let cc = 0; cc < Cg; cc++) for (let a = 0; a < KH; a++) for (let b = 0; b < KW; b++) {
      const y = i * sh + a * dh - ph;
      const z = j * sw + b * dw - pw;
      if (y < 0 || y >= H || z < 0 || z >= W) continue;
      const [fa, fb] = flip ? [KH - 1 - a, KW - 1 - b] : [a, b];
      s += x[((n * C + g * Cg + cc) * H + y) * W + z]! * w[((o * Cg + cc) * KH + fa) * KW + fb]!;
    }
    out.push(s);
  }
  return { data: out, shape: [N, O, HO, WO] };
}

const CASES: Case[] = [
  { x: [2, 3, 7, 6], w: [4, 3, 3, 2], border: 'valid' },
  { x: [2, 3, 7, 6], w: [4, 3, 3, 2], border: 'full' },
  { x: [1, 2, 6, 6], w: [3, 2, 3, 3], border: 'half' },
  { x: [1, 2, 6, 5], w: [2, 2, 2, 2], border: 'half' },
  { x: [2, 2, 8, 7], w: [2, 2, 3, 3], border: [2, 1], subsample: [2, 3] },
  { x: [1, 3, 9, 9], w: [2, 3, 3, 2], border: 'valid', dilation: [2, 3] },
  { x: [2, 4, 5, 5], w: [6, 2, 3, 3], border: 'half', groups: 2 },
  { x: [1, 2, 5, 6], w: [3, 2, 2, 3], border: 'full', flip: false, subsample: [2, 1], dilation: [1, 2] },
];

const options = (c: Case): weft.pt.Conv2dOptions => ({ borderMode: c.border, subsample: c.subsample, filterDilation: c.dilation, numGroups: c.groups, filterFlip: c.flip });

const DIRECT = new weft.Mode({ excluding: ['conv_gemm'] });
const FORMS = [['im2col + gemm', undefined], ['direct kernels', DIRECT]] as const;
const opNames = (fn: weft.CompiledFunction): string[] => fn.fgraph.toposort().map((n) => n.op.constructor.name);

t.test('values: every border mode, strides, dilation, groups, flipped or not (against the definition), both forms', async (t) => {
  const x = pt.tensor4('x');
  const w = pt.tensor4('w');
  for (const [form, mode] of FORMS) {
    for (const c of CASES) {
      const xv = r.normal([...c.x]);
      const wv = r.normal([...c.w]);
      const want = reference(xv.data as Float64Array, c.x, wv.data as Float64Array, c.w, c);
      const fn = await weft.compile([x, w], pt.conv2d(x, w, options(c)), { mode });
      const got = (await fn(xv, wv)) as weft.NdArray;
      const label = `${form} ${JSON.stringify(c)}`;
      t.same(got.shape, want.shape, `${label}: shape`);
      const bad = want.data.filter((v, k) => Math.abs(v - got.data[k]!) > 1e-12 * Math.max(1, Math.abs(v))).length;
      t.equal(bad, 0, `${label}: values`);
      t.equal(opNames(fn).includes('Conv2d'), mode === DIRECT, `${label}: Conv2d ${mode === DIRECT ? 'kept' : 'rewritten'}`);
    }
  }
});

t.test('the rewrite (local_abstractconv_gemm and its gradient twins): im2col, col2im and matrix products; the gradients equal the direct kernels', async (t) => {
  const x = pt.tensor4('x');
  const w = pt.tensor4('w');
  for (const c of CASES) {
    const y = pt.conv2d(x, w, options(c));
    const [gx, gw] = weft.grad(y.mul(y).sum(), [x, w]) as TV[];
    const xv = r.normal([...c.x]);
    const wv = r.normal([...c.w]);
    const gemmFn = await weft.compile([x, w], [y, gx!, gw!]);
    const directFn = await weft.compile([x, w], [y, gx!, gw!], { mode: DIRECT });
    const names = opNames(gemmFn);
    t.notOk(names.some((n) => n.startsWith('Conv2d')), `${JSON.stringify(c)}: no direct convolution left`);
    t.ok(names.includes('Im2Col') && names.includes('Col2Im') && names.includes('MatMul'), 'im2col, col2im, matmul');
    t.same(opNames(directFn).filter((n) => n.startsWith('Conv2d')).sort(), ['Conv2d', 'Conv2dGradFilters', 'Conv2dGradInputs']);
    const [a, b] = [(await gemmFn(xv, wv)) as weft.NdArray[], (await directFn(xv, wv)) as weft.NdArray[]];
    a.forEach((v, k) => {
      const worst = Math.max(...Array.from(v.data as Float64Array, (e, i) => Math.abs(e - b[k]!.data[i]!) / Math.max(1, Math.abs(b[k]!.data[i]!))));
      t.ok(worst < 1e-12, `${JSON.stringify(c)} output ${k}: the forms agree (worst ${worst.toExponential(1)})`);
    });
  }
});

t.test('gradients (input and filters), Rop, inferShape, DebugMode', async (t) => {
  for (const c of CASES.slice(0, 8)) {
    const xv = r.normal([1, ...c.x.slice(1)]);
    const wv = r.normal([...c.w]);
    await weft.verifyGrad((a: TV, b: TV) => pt.conv2d(a, b, options(c)), [xv, wv], { rng: rng(11) });
    await weft.checkRop((a: TV, b: TV) => pt.conv2d(a, b, options(c)), [xv, wv]);
    const x = pt.tensor4('x');
    const w = pt.tensor4('w');
    const y = pt.conv2d(x, w, options(c));
    const [gx, gw] = weft.grad(y.sum(), [x, w]) as TV[];
    await weft.checkInferShape([x, w], [y, gx!, gw!], [xv, wv]);
    const debug = await weft.compile([x, w], [y, gx!, gw!], { mode: 'DebugMode' });
    await debug(xv, wv);
  }
  t.pass('checked');
});

t.test('float32 on 2 workers: the bits of the calling thread, both forms', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.tensor4('x', 'float32');
  const w = pt.tensor4('w', 'float32');
  for (const [form, mode, groups] of [...FORMS.map(([f, m]) => [f, m, 1] as const), ['im2col + gemm, 2 groups', undefined, 2] as const]) {
    const y = pt.conv2d(x, w, { borderMode: 'half', numGroups: groups });
    const [gx, gw] = weft.grad(y.mul(y).sum(), [x, w]) as TV[];
    const xv = weft.ndarray(Float32Array.from(r.normal([8 * 2 * 28 * 28]).data as Float64Array), [8, 2, 28, 28]);
    const wv = weft.ndarray(Float32Array.from(r.normal([16 * 50 / groups]).data as Float64Array), [16, 2 / groups, 5, 5]);
    const a = (await (await weft.compile([x, w], [y, gx!, gw!], { workers: 0, mode }))(xv, wv)) as weft.NdArray[];
    const b = (await (await weft.compile([x, w], [y, gx!, gw!], { pool, mode }))(xv, wv)) as weft.NdArray[];
    t.equal(a[0]!.dtype, 'float32');
    a.forEach((v, k) => t.ok(v.data.every((e, i) => Object.is(e, b[k]!.data[i])), `${form} output ${k}: equal bits`));
  }
});

t.test('second order: the gradients of the gradients (verifyGrad of a gradient: Hessian-vector products against finite differences), and their Rop', async (t) => {
  for (const c of [CASES[0]!, CASES[4]!, CASES[6]!, CASES[7]!]) {
    const xv = r.normal([1, ...c.x.slice(1)]);
    const wv = r.normal([...c.w]);
    const gradOf = (k: 0 | 1) => (a: TV, b: TV): TV => {
      const y = pt.conv2d(a, b, options(c));
      return (weft.grad(y.mul(y).sum(), [a, b]) as TV[])[k]!;
    };
    // Through Conv2dGradInputs (k = 0) and Conv2dGradFilters (k = 1): their gradients for the
    // filters or input and for the output gradient (here 2y) both take part.
    await weft.verifyGrad(gradOf(0), [xv, wv], { rng: rng(5) });
    await weft.verifyGrad(gradOf(1), [xv, wv], { rng: rng(6) });
    await weft.checkRop(gradOf(0), [xv, wv]);
    await weft.checkRop(gradOf(1), [xv, wv]);
  }
  t.pass('checked');
});

t.test('im2col and col2im: the patches by their definition, each the other\'s gradient, Rop, inferShape', async (t) => {
  const conv = new Conv2d('explicit', [1, 0], [2, 1], [1, 2], 2, true);
  const x = pt.tensor4('x');
  const w = pt.tensor4('w');
  const cols = new Im2Col('explicit', [1, 0], [2, 1], [1, 2], 2, true).call(x, w) as TV;
  const xv = r.normal([2, 4, 5, 6]);
  const wv = r.normal([6, 2, 2, 2]);
  const got = (await (await weft.compile([x, w], cols))(xv, wv)) as weft.NdArray;
  // [N, groups, Cg*KH*KW, HO*WO]: HO = (5 + 2 - 2) / 2 + 1 = 3, WO = 6 - 3 + 1 = 4.
  t.same(got.shape, [2, 2, 8, 12]);
  let bad = 0;
  for (let n = 0; n < 2; n++) for (let g = 0; g < 2; g++) for (let c = 0; c < 2; c++) for (let fa = 0; fa < 2; fa++) for (let fb = 0; fb < 2; fb++) for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) {
    const [y, z] = [i * 2 + (1 - fa) - 1, j + (1 - fb) * 2];
    const want = y < 0 || y >= 5 ? 0 : xv.data[((n * 4 + g * 2 + c) * 5 + y) * 6 + z]!;
    if (got.data[(((n * 2 + g) * 8 + (c * 2 + fa) * 2 + fb) * 3 + i) * 4 + j] !== want) bad++;
  }
  t.equal(bad, 0, 'every patch entry');
  await weft.verifyGrad((a: TV) => new Im2Col('explicit', [1, 0], [2, 1], [1, 2], 2, true).call(a, pt.constant(wv)) as TV, [xv], { rng: rng(7) });
  await weft.verifyGrad((a: TV) => new Col2Im('half', [0, 0], [1, 1], [1, 1], 1, false).call(a, pt.constant(r.normal([1, 2, 4, 4])), pt.constant(r.normal([3, 2, 3, 3]))) as TV, [r.normal([1, 1, 18, 16])], { rng: rng(8) });
  await weft.checkRop((a: TV) => new Im2Col('valid', [0, 0], [1, 1], [1, 1], 1, true).call(a, pt.constant(r.normal([3, 4, 2, 2]))) as TV, [xv]);
  await weft.checkInferShape([x, w], [cols, new Col2Im('explicit', [1, 0], [2, 1], [1, 2], 2, true).call(cols, x, w) as TV], [xv, wv]);
  t.equal(String(conv.sameAs(Im2Col)), 'Im2Col{pad=1x0, subsample=2x1, dilation=1x2, groups=2}');
});

t.test('shapes that do not fit, and bad options: the exact errors', async (t) => {
  const x = pt.tensor4('x');
  const w = pt.tensor4('w');
  await throwsExactly(t, () => pt.conv2d(pt.tensor({ name: 'a', shape: [1, 3, 5, 5] }), pt.tensor({ name: 'f', shape: [2, 2, 3, 3] })), TypeError, 'conv2d: the input a (TensorType(float64, (1, 3, 5, 5))) has 3 channels, the filters f (TensorType(float64, (2, 2, 3, 3))) take 2 per group in 1 group');
  const fn = await weft.compile([x, w], pt.conv2d(x, w));
  await t.rejects(fn(r.normal([1, 2, 2, 2]), r.normal([1, 2, 3, 3])), { message: /conv2d: the input of shape \[1, 2, 2, 2\] and the filters of shape \[1, 2, 3, 3\] do not fit: the filters' windows \(dilation 1x1\) are larger than the input padded by 0x0/ });
  await t.rejects(fn(r.normal([1, 3, 4, 4]), r.normal([1, 2, 3, 3])), { message: /conv2d: the input of shape \[1, 3, 4, 4\] and the filters of shape \[1, 2, 3, 3\] do not fit: the input has 3 channels, the filters take 2 per group in 1 group/ });
  await throwsExactly(t, () => pt.conv2d(pt.matrix('m'), w), TypeError, 'Conv2d{valid}: expected 4-d tensors (NCHW inputs, OIHW filters), got m (TensorType(float64, (?, ?)))');
  await throwsExactly(t, () => pt.conv2d(x, w, { subsample: [0, 1] }), RangeError, 'conv2d: subsample must be two integers of at least 1, got [0, 1]');
  await throwsExactly(t, () => pt.conv2d(x, w, { borderMode: 'same' as 'half' }), TypeError, `conv2d: borderMode must be 'valid', 'full', 'half' or [rows, columns], got "same"`);
});

t.teardown(() => weft.shutdown());

t.test('float32 with unit strides: the direct WebAssembly kernel (padded first where the border asks), against the definition; the bits of im2col + gemm on 0, 1 and 2 workers', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  // Leftover filters (O not a multiple of 4), column tails (WO not a multiple of 8 or 4, or under 4),
  // groups, cross-correlation, several channels, every border mode (padded, then valid).
  const cases: readonly Case[] = [
    { x: [3, 1, 12, 12], w: [6, 1, 5, 5], border: 'valid' },
    { x: [2, 3, 9, 14], w: [5, 3, 3, 2], border: 'valid', flip: false },
    { x: [2, 4, 7, 11], w: [8, 2, 2, 3], border: [0, 0], groups: 2 },
    { x: [1, 2, 6, 6], w: [4, 2, 6, 6], border: 'valid' },
    { x: [2, 3, 10, 9], w: [6, 3, 3, 3], border: 'half' },
    { x: [2, 2, 5, 7], w: [4, 2, 2, 3], border: 'full', flip: false },
    { x: [3, 2, 8, 5], w: [5, 2, 3, 3], border: [1, 2] },
    { x: [2, 1, 4, 5], w: [3, 1, 3, 3], border: 'valid' },
  ];
  for (const c of cases) {
    const label = JSON.stringify(c);
    const xv = r.normal([...c.x]);
    const wv = r.normal([...c.w]);
    const want = reference(xv.data as Float64Array, c.x, wv.data as Float64Array, c.w, c);
    const x32 = pool.from(weft.ndarray(Float32Array.from(xv.data as Float64Array), [...c.x]));
    const w32 = pool.from(weft.ndarray(Float32Array.from(wv.data as Float64Array), [...c.w]));
    const x = pt.tensor4('x', 'float32');
    const w = pt.tensor4('w', 'float32');
    const runs: Float32Array[] = [];
    for (const workers of [0, 1, 2]) {
      const fn = await weft.compile([x, w], pt.conv2d(x, w, options(c)), { pool, workers });
      t.ok(opNames(fn).includes('Conv2d') && !opNames(fn).includes('Im2Col'), `${label}: the direct kernel`);
      const conv = fn.fgraph.toposort().find((n) => n.op instanceof Conv2d)!.op as Conv2d;
      if (c.border !== 'valid' && String(c.border) !== '0,0') t.ok(conv.border === 'explicit' && conv.pad.every((p) => p === 0) && opNames(fn).includes('Alloc'), `${label}: over the image padded with zeros`);
      runs.push(((await fn(x32, w32)) as weft.NdArray).data as Float32Array);
    }
    const unpooled = await weft.compile([x, w], pt.conv2d(x, w, options(c)), { workers: 0 });
    runs.push(((await unpooled(x32, w32)) as weft.NdArray).data as Float32Array);
    // DebugMode's perform runs the JS loop on arrays outside the pool's memory: the same sums.
    const debug = await weft.compile([x, w], pt.conv2d(x, w, options(c)), { mode: 'DebugMode' });
    runs.push(((await debug(weft.ndarray(Float32Array.from(xv.data as Float64Array), [...c.x]), weft.ndarray(Float32Array.from(wv.data as Float64Array), [...c.w]))) as weft.NdArray).data as Float32Array);
    const bad = want.data.filter((v, k) => Math.abs(v - runs[0]![k]!) > 1e-5 * Math.max(1, Math.abs(v))).length;
    t.equal(bad, 0, `${label}: values`);
    runs.forEach((run, k) => t.ok(run.every((e, i) => Object.is(e, runs[0]![i])), `${label}: run ${k}, equal bits`));
    // im2col + gemm by hand, as local_abstractconv_gemm writes it: the same sums in the same order.
    const [O, Cg, KH, KW] = c.w as [number, number, number, number];
    const groups = c.groups ?? 1;
    const explicit = typeof c.border !== 'string';
    const cols = new Im2Col(explicit ? 'explicit' : (c.border as 'valid'), explicit ? (c.border as [number, number]) : [0, 0], [1, 1], [1, 1], groups, c.flip ?? true).call(x, w) as TV;
    const byGemm = pt.reshape(pt.matmul(pt.reshape(w, [groups, O / groups, Cg * KH * KW]), cols), want.shape);
    const gemmFn = await weft.compile([x, w], byGemm, { pool, workers: 2 });
    const viaGemm = ((await gemmFn(x32, w32)) as weft.NdArray).data;
    // (A product with one column, as the last case's, is not the SIMD gemm's: its sums are float64.)
    if (want.shape[3]! > 1) t.ok(viaGemm.every((e, i) => Object.is(e, runs[0]![i])), `${label}: the bits of im2col + gemm`);
  }
});

t.test('filters of a static shape: conv2d and its gradients compile (the rewrite budget follows the graph that im2col expands) and give the values', async (t) => {
  // Before, the budget was 8 rewrites per node of the one-node graph, and folding the shape
  // arithmetic of the patches exceeded it: a RewriteCycleError for any fully known filter shape.
  const c: Case = { x: [2, 3, 8, 7], w: [2, 3, 3, 2], border: 'half' };
  const x = pt.tensor4('x');
  const w = pt.tensor({ shape: [...c.w], dtype: 'float64', name: 'w' });
  const y = pt.conv2d(x, w, options(c));
  const [gx, gw] = weft.grad(y.mul(y).sum(), [x, w]) as TV[];
  const fn = await weft.compile([x, w], [y, gx!, gw!]);
  t.ok(opNames(fn).includes('Im2Col'), 'im2col + gemm');
  const xv = r.normal([...c.x]);
  const wv = r.normal([...c.w]);
  const want = reference(xv.data as Float64Array, c.x, wv.data as Float64Array, c.w, c);
  const [got] = (await fn(xv, wv)) as weft.NdArray[];
  t.equal(want.data.filter((v, k) => Math.abs(v - got!.data[k]!) > 1e-12 * Math.max(1, Math.abs(v))).length, 0, 'values');
});

t.test('float32 over a view (NHWC images transposed to NCHW): the view copied for the direct kernel, the bits of im2col + gemm', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const nhwc = pt.tensor4('nhwc', 'float32');
  const w = pt.tensor4('w', 'float32');
  const x = nhwc.dimshuffle(0, 3, 1, 2);
  const xv = r.normal([2, 9, 11, 3]);
  const wv = r.normal([5, 3, 3, 4]);
  const x32 = weft.ndarray(Float32Array.from(xv.data as Float64Array), [2, 9, 11, 3]);
  const w32 = weft.ndarray(Float32Array.from(wv.data as Float64Array), [5, 3, 3, 4]);
  const direct = await weft.compile([nhwc, w], pt.conv2d(x, w), { pool });
  const ops = direct.fgraph.toposort().map((n) => String(n.op));
  t.ok(ops.some((o) => o.startsWith('SetSubtensor')) && ops.at(-1)!.startsWith('Conv2d'), `a copy, then the direct kernel: ${ops.join(', ')}`);
  const cols = new Im2Col('valid', [0, 0], [1, 1], [1, 1], 1, true).call(x, w) as TV;
  const byGemm = pt.reshape(pt.matmul(pt.reshape(w, [1, 5, 36]), cols), [2, 5, 7, 8]);
  const [a, b] = [(await direct(x32, w32)) as weft.NdArray, (await (await weft.compile([nhwc, w], byGemm, { pool }))(x32, w32)) as weft.NdArray];
  t.same(a.shape, [2, 5, 7, 8]);
  t.ok(a.data.every((e, i) => Object.is(e, b.data[i])), 'the bits of im2col + gemm');
  const nchw = Float64Array.from({ length: 2 * 3 * 9 * 11 }, (_, k) => {
    const [n, c, i, j] = [Math.floor(k / 297), Math.floor(k / 99) % 3, Math.floor(k / 11) % 9, k % 11];
    return (xv.data as Float64Array)[((n * 9 + i) * 11 + j) * 3 + c]!;
  });
  const want = reference(nchw, [2, 3, 9, 11], wv.data as Float64Array, [5, 3, 3, 4], { x: [2, 3, 9, 11], w: [5, 3, 3, 4], border: 'valid' });
  t.equal(want.data.filter((v, k) => Math.abs(v - a.data[k]!) > 1e-5 * Math.max(1, Math.abs(v))).length, 0, 'values');
});

t.test('float32 with no input channels: the direct path leaves it to the loop, which writes zeros', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.tensor4('x', 'float32');
  const w = pt.tensor4('w', 'float32');
  for (const workers of [0, 2]) {
    const fn = await weft.compile([x, w], pt.conv2d(x, w), { pool, workers });
    const out = (await fn(pool.from(weft.ndarray(new Float32Array(0), [1, 0, 5, 5])), pool.from(weft.ndarray(new Float32Array(0), [4, 0, 3, 3])))) as weft.NdArray;
    t.same(out.shape, [1, 4, 3, 3]);
    t.ok(out.data.every((v) => v === 0), `zeros (workers ${workers})`);
  }
});
