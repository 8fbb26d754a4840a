// NumPy's rearrangements that copy: roll, tile, repeat (a constant count), pad (constant, edge and
// reflect) and diff. Each is a graph of slices, joins, broadcasts and reshapes, so gradients,
// inferShape and the worker kernels are those ops'.
import { asTensorVariable } from '../core/as-tensor.js';
import { slice } from '../core/slice.js';
import type { TensorLike, TensorVariable } from '../core/variable.js';
import { add, cast, mod, mul, sub } from '../elemwise/math.js';
import { normalizeAxes } from '../elemwise/reduce.js';
import { alloc } from './alloc.js';
import { dimshuffle, type ShuffleEntry } from './dimshuffle.js';
import { concatenate } from './join.js';
import { flatten, reshape } from './reshape.js';
import { asIntScalar, shapeOf } from './shape.js';
import { get, setSubtensor } from './subtensor.js';
import { expandDims, flip } from './axes.js';

/** `v` indexed along axis `a` by `s`, every other axis whole. */
function along(v: TensorVariable, a: number, s: ReturnType<typeof slice>): TensorVariable {
  return get(v, ...[...Array(v.ndim).keys()].map((k) => (k === a ? s : slice(null, null))));
}

function countOf(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative integer, got ${n}`);
  return n;
}

export interface RollOptions {
  /** The axis or axes to roll (one shift each, or one shift for all); the flattened array when omitted. */
  readonly axis?: number | readonly number[];
}

/** Elements shifted `shift` places along the axis, those that leave at the end coming back at the start (NumPy's roll). */
export function roll(x: TensorLike, shift: number | TensorVariable | ReadonlyArray<number | TensorVariable>, options: RollOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  if (options.axis === undefined) return reshape(roll(flatten(v), shift as number | TensorVariable, { axis: 0 }), shapeOf(v));
  const axes = typeof options.axis === 'number' ? [options.axis] : [...options.axis];
  const shifts = Array.isArray(shift) ? [...(shift as ReadonlyArray<number | TensorVariable>)] : axes.map(() => shift as number | TensorVariable);
  if (shifts.length !== axes.length) throw new RangeError(`roll: ${shifts.length} shifts for ${axes.length} axes`);
  let out = v;
  axes.forEach((axis, i) => {
    const [a] = normalizeAxes(axis, v.ndim, 'roll');
    const n = shapeOf(out)[a!]!;
    // The first n - s elements move to the end: [n - s:] then [:n - s], with s taken modulo n.
    const cut = sub(n, mod(asIntScalar(shifts[i]!, 'roll: shift'), n));
    out = concatenate([along(out, a!, slice(cut, null)), along(out, a!, slice(null, cut))], a!);
  });
  return out;
}

/**
 * `x` repeated `reps[i]` times along axis i (NumPy's tile): reps shorter than x's axes count for
 * the last ones, longer ones add leading axes.
 */
export function tile(x: TensorLike, reps: number | readonly number[]): TensorVariable {
  const v = asTensorVariable(x);
  const given = (typeof reps === 'number' ? [reps] : [...reps]).map((r) => countOf(r, 'tile: each repetition'));
  const nd = Math.max(v.ndim, given.length);
  const counts = [...Array<number>(nd - given.length).fill(1), ...given];
  const padded = dimshuffle(v, [...Array<ShuffleEntry>(nd - v.ndim).fill('x'), ...[...Array(v.ndim).keys()]]);
  const lengths = shapeOf(padded);
  // (r0, n0, r1, n1, ...) by broadcasting, then each pair merged: every copy of axis i in turn.
  const spread = dimshuffle(padded, [...Array(nd).keys()].flatMap((a): ShuffleEntry[] => ['x', a]));
  const copies = alloc(spread, ...counts.flatMap((r, a) => [r, lengths[a]!]));
  return reshape(copies, counts.map((r, a) => mul(r, lengths[a]!)));
}

export interface RepeatOptions {
  /** The axis along which each element is repeated; the flattened array when omitted. */
  readonly axis?: number;
}

/** Each element repeated `repeats` times in place along the axis (NumPy's repeat with one count). */
export function repeat(x: TensorLike, repeats: number, options: RepeatOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  if (typeof repeats !== 'number') throw new TypeError('repeat: repeats must be one number (a count per element needs integer indexing: take)');
  const r = countOf(repeats, 'repeat: repeats');
  if (options.axis === undefined) return repeat(flatten(v), r, { axis: 0 });
  const [a] = normalizeAxes(options.axis, v.ndim, 'repeat');
  const lengths = shapeOf(v);
  // An axis of r copies after axis a, filled by broadcasting, merged with it.
  const spread = dimshuffle(v, [...Array(v.ndim).keys()].flatMap((k): ShuffleEntry[] => (k === a ? [k, 'x'] : [k])));
  const copies = alloc(spread, ...lengths.flatMap((n, k) => (k === a ? [n, r] : [n])));
  return reshape(copies, lengths.map((n, k) => (k === a ? mul(n, r) : n)));
}

export type PadWidths = number | readonly [number, number] | ReadonlyArray<readonly [number, number]>;

export interface PadOptions {
  /** 'constant' (default): constantValue; 'edge': the edge element repeated; 'reflect': mirrored about the edge element. */
  readonly mode?: 'constant' | 'edge' | 'reflect';
  readonly constantValue?: number;
}

/** Each axis's (before, after) widths from NumPy's forms: n, [before, after], or one pair per axis. */
function padWidths(widths: PadWidths, ndim: number): Array<readonly [number, number]> {
  const pairs: Array<readonly [number, number]> =
    typeof widths === 'number' ? Array(ndim).fill([widths, widths])
    : typeof widths[0] === 'number' ? Array(ndim).fill(widths as readonly [number, number])
    : [...(widths as ReadonlyArray<readonly [number, number]>)];
  if (pairs.length !== ndim) throw new RangeError(`pad: ${pairs.length} pairs of widths for ${ndim} axes`);
  pairs.forEach((p, a) => p.forEach((w) => countOf(w, `pad: the width on axis ${a}`)));
  return pairs;
}

/** `x` with `widths` elements added before and after each axis (NumPy's pad). */
export function pad(x: TensorLike, widths: PadWidths, options: PadOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  const pairs = padWidths(widths, v.ndim);
  const mode = options.mode ?? 'constant';
  if (mode === 'constant') {
    // A filled array of the padded shape with x set into its middle.
    const lengths = shapeOf(v);
    const filled = alloc(cast(options.constantValue ?? 0, v.dtype), ...lengths.map((n, a) => add(n, pairs[a]![0] + pairs[a]![1])));
    return setSubtensor(get(filled, ...pairs.map(([before], a) => slice(before, add(lengths[a]!, before)))), v);
  }
  if (mode !== 'edge' && mode !== 'reflect') throw new TypeError(`pad: mode must be 'constant', 'edge' or 'reflect', got ${JSON.stringify(mode)}`);
  let out = v;
  pairs.forEach(([before, after], a) => {
    if (before === 0 && after === 0) return;
    const n = v.type.shape[a];
    if (mode === 'reflect' && n !== null && Math.max(before, after) >= n) {
      throw new RangeError(`pad: a reflection on axis ${a} of length ${n} can add at most ${n - 1} elements on a side, not ${Math.max(before, after)}`);
    }
    const edge = (first: boolean, width: number): TensorVariable => {
      if (mode === 'edge') {
        // The edge element as an axis of static length 1, broadcast to the width.
        const one = expandDims(get(out, ...[...Array(out.ndim).keys()].map((k) => (k === a ? (first ? 0 : -1) : slice(null, null)))), a);
        return alloc(one, ...shapeOf(one).map((d, k) => (k === a ? asIntScalar(width, 'pad') : d)));
      }
      // The width elements next to the edge one, in mirror order.
      return flip(along(out, a, first ? slice(1, width + 1) : slice(-width - 1, -1)), { axis: a });
    };
    const parts = [...(before > 0 ? [edge(true, before)] : []), out, ...(after > 0 ? [edge(false, after)] : [])];
    out = concatenate(parts, a);
  });
  return out;
}

export interface DiffOptions {
  /** How many times to take the difference (default 1). */
  readonly n?: number;
  /** The axis (default the last). */
  readonly axis?: number;
}

/** x[i + 1] - x[i] along the axis, `n` times over (NumPy's diff). */
export function diff(x: TensorLike, options: DiffOptions = {}): TensorVariable {
  const v = asTensorVariable(x);
  const n = countOf(options.n ?? 1, 'diff: n');
  const [a] = normalizeAxes(options.axis ?? -1, v.ndim, 'diff');
  let out = v;
  for (let k = 0; k < n; k++) out = sub(along(out, a!, slice(1, null)), along(out, a!, slice(null, -1)));
  return out;
}
