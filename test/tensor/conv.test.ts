// conv2d (issue 14), after PyTensor's test_abstract_conv.py: values against a direct reference
// written here (zero padding, strides, dilation, groups, flipped or not) for every border mode,
// gradients with respect to the input and the filters (verifyGrad), Rop, inferShape, DebugMode,
// the same bits on 0 and 2 workers, float32, and shapes that do not fit named exactly.
import t from 'tap';
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

t.test('values: every border mode, strides, dilation, groups, flipped or not (against the definition)', async (t) => {
  const x = pt.tensor4('x');
  const w = pt.tensor4('w');
  for (const c of CASES) {
    const xv = r.normal([...c.x]);
    const wv = r.normal([...c.w]);
    const want = reference(xv.data as Float64Array, c.x, wv.data as Float64Array, c.w, c);
    const got = (await (await weft.compile([x, w], pt.conv2d(x, w, options(c))))(xv, wv)) as weft.NdArray;
    const label = JSON.stringify(c);
    t.same(got.shape, want.shape, `${label}: shape`);
    const bad = want.data.filter((v, k) => Math.abs(v - got.data[k]!) > 1e-12 * Math.max(1, Math.abs(v))).length;
    t.equal(bad, 0, `${label}: values`);
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

t.test('float32 on 2 workers: the bits of the calling thread', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const x = pt.tensor4('x', 'float32');
  const w = pt.tensor4('w', 'float32');
  const y = pt.conv2d(x, w, { borderMode: 'half' });
  const [gx, gw] = weft.grad(y.mul(y).sum(), [x, w]) as TV[];
  const xv = weft.ndarray(Float32Array.from(r.normal([8 * 28 * 28]).data as Float64Array), [8, 1, 28, 28]);
  const wv = weft.ndarray(Float32Array.from(r.normal([16 * 25]).data as Float64Array), [16, 1, 5, 5]);
  const a = (await (await weft.compile([x, w], [y, gx!, gw!], { workers: 0 }))(xv, wv)) as weft.NdArray[];
  const b = (await (await weft.compile([x, w], [y, gx!, gw!], { pool }))(xv, wv)) as weft.NdArray[];
  t.equal(a[0]!.dtype, 'float32');
  a.forEach((v, k) => t.ok(v.data.every((e, i) => Object.is(e, b[k]!.data[i])), `output ${k}: equal bits`));
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
