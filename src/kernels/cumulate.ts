// Cumulative sums and products along an axis ('cumulate': each lane scanned in order, every
// partial result stored in the output's dtype, so float32 sums round as NumPy's do), and the
// gradient of a cumulative product ('cumprodGrad'), which holds where x has zeros: for y = cumprod(x),
// dx_k = (x_0 ... x_{k-1}) * S_k with S_k = g_k + x_{k+1} S_{k+1}, no division; and its Rop
// ('cumprodRop', the product rule along the lane), and the second derivatives ('cumprodGradGrad',
// O(n^2) per lane, still without a division). Chunked by lanes.
import { forEachLane } from './lanes.js';
import { registerKernel } from './registry.js';

export interface CumulateParams {
  readonly axis: number;
  readonly mode: 'add' | 'mul';
}

registerKernel('cumulate', ([x], [out], params, range) => {
  const { axis, mode } = params as unknown as CumulateParams;
  const n = x!.shape[axis]!;
  const [sx, so] = [x!.stride[axis]!, out!.stride[axis]!];
  const [src, dst] = [x!.data, out!.data];
  forEachLane([x!, out!], axis, range, (p, q) => {
    let acc = mode === 'add' ? 0 : 1;
    for (let i = 0; i < n; i++) {
      const v = src[p + i * sx]!;
      dst[q + i * so] = mode === 'add' ? acc + v : acc * v;
      // The stored partial (rounded, or wrapped, as the output's dtype holds it) carries on.
      acc = dst[q + i * so]!;
    }
  });
});

registerKernel('cumprodGrad', ([x, g], [out], params, range) => {
  const { axis } = params as unknown as CumulateParams;
  const n = x!.shape[axis]!;
  const [sx, sg, so] = [x!.stride[axis]!, g!.stride[axis]!, out!.stride[axis]!];
  const [xs, gs, dst] = [x!.data, g!.data, out!.data];
  forEachLane([x!, g!, out!], axis, range, (p, q, r) => {
    // S backwards into the output, then times the exclusive prefix products forwards.
    let s = 0;
    for (let i = n - 1; i >= 0; i--) {
      s = gs[q + i * sg]! + (i + 1 < n ? xs[p + (i + 1) * sx]! * s : 0);
      dst[r + i * so] = s;
    }
    let prefix = 1;
    for (let i = 0; i < n; i++) {
      dst[r + i * so] = prefix * dst[r + i * so]!;
      prefix *= xs[p + i * sx]!;
    }
  });
});

registerKernel('cumprodRop', ([x, ev], [out], params, range) => {
  const { axis } = params as unknown as CumulateParams;
  const n = x!.shape[axis]!;
  const [sx, se, so] = [x!.stride[axis]!, ev!.stride[axis]!, out!.stride[axis]!];
  const [xs, es, dst] = [x!.data, ev!.data, out!.data];
  forEachLane([x!, ev!, out!], axis, range, (p, q, r) => {
    // The product rule along the lane: d_i = d_{i-1} x_i + y_{i-1} e_i, with y the running product.
    let [y, d] = [1, 0];
    for (let i = 0; i < n; i++) {
      const v = xs[p + i * sx]!;
      d = d * v + y * es[q + i * se]!;
      y *= v;
      dst[r + i * so] = d;
    }
  });
});

registerKernel('cumprodGradGrad', ([x, a, b], [out], params, range) => {
  const { axis } = params as unknown as CumulateParams;
  const n = x!.shape[axis]!;
  const [sx, sa, sb, so] = [x!.stride[axis]!, a!.stride[axis]!, b!.stride[axis]!, out!.stride[axis]!];
  const [xs, as, bs, dst] = [x!.data, a!.data, b!.data, out!.data];
  forEachLane([x!, a!, b!, out!], axis, range, (p, q, r, s) => {
    // For each m: t_j = sum over i <= j, i != m, of b_i prod(x_k : k <= j, k != i, m), from
    // t_m = the Rop of the prefix before m, by t_j = t_{j-1} x_j + b_j prod(x_k : k < j, k != m).
    let [ropBefore, productBefore] = [0, 1];
    for (let m = 0; m < n; m++) {
      let [t, without] = [ropBefore, productBefore];
      let acc = as[q + m * sa]! * t;
      for (let j = m + 1; j < n; j++) {
        const v = xs[p + j * sx]!;
        t = t * v + bs[r + j * sb]! * without;
        without *= v;
        acc += as[q + j * sa]! * t;
      }
      dst[s + m * so] = acc;
      const v = xs[p + m * sx]!;
      ropBefore = ropBefore * v + productBefore * bs[r + m * sb]!;
      productBefore *= v;
    }
  });
});
