// The kinds of the tensor ops' props (graph/prop-kinds.ts): axes, ranks, dtypes, index lists.
// An op names them in `static propKinds`, and its codec (derived from `static props`) reads
// untrusted documents with them: every value checked for its kind and range.
import { propKinds, type PropKind } from '../../graph/prop-kinds.js';
import { DTYPES, type Dtype } from '../../kernels/dtype.js';
import type { IndexSpec } from '../../kernels/subtensor.js';

/** Ranks a document may give (tensors of more dimensions are refused when read). */
export const MAX_AXES = 64;

const indexSpec: PropKind<IndexSpec> = {
  encode: (e) => (typeof e === 'string' ? e : { start: e.start, stop: e.stop, step: e.step }),
  read: (r) => {
    if (r.value === 'int' || r.value === 'newaxis') return r.value;
    if (typeof r.value !== 'object' || r.value === null || Array.isArray(r.value)) {
      r.fail('"int", "newaxis" or a slice { start, stop, step } of booleans');
    }
    r.object(['start', 'stop', 'step']);
    return { start: r.field('start').boolean(), stop: r.field('stop').boolean(), step: r.field('step').boolean() };
  },
};

/** An entry of a DimShuffle's new order: an input axis, or 'x' for a new broadcastable one. */
const shuffleEntry: PropKind<number | 'x'> = {
  encode: (e) => e,
  read: (r) => (r.value === 'x' ? 'x' : r.int(0, MAX_AXES - 1)),
};

export const tensorPropKinds = {
  /** An axis counted from the front. */
  axis: propKinds.int(0, MAX_AXES - 1),
  /** An axis that may count from the back (-1 is the last). */
  signedAxis: propKinds.int(-MAX_AXES, MAX_AXES - 1),
  /** A list of axes counted from the front. */
  axes: propKinds.ints(0, MAX_AXES - 1, MAX_AXES),
  /** A number of dimensions. */
  ndim: propKinds.int(0, MAX_AXES),
  dtype: propKinds.oneOf<Dtype>(DTYPES),
  /** Dtypes of numbers (not bool). */
  numericDtype: propKinds.oneOf<Dtype>(DTYPES.filter((d) => d !== 'bool')),
  floatDtype: propKinds.oneOf<Dtype>(['float32', 'float64']),
  /** Integer dtypes (not bool, not floats). */
  integerDtype: propKinds.oneOf<Dtype>(DTYPES.filter((d) => d !== 'bool' && d !== 'float32' && d !== 'float64')),
  /** A subtensor's index list: an integer, a new axis or a slice (which parts are given) per entry. */
  idxList: propKinds.list(indexSpec, MAX_AXES * 2),
  shuffleOrder: propKinds.list(shuffleEntry, MAX_AXES),
} as const;
