// New values of shared variables that compiled functions keep in their pool's shared memory
// between calls: an update's value goes into a block of the arena (Arena.ownedArray), where the
// next call reads it, instead of into fresh memory of the caller's. This file counts the calls
// reading each such value, and gives its block back once the variable has a newer value
// (`retire`) and no call reads it any more.
import type { NdArray } from '../tensor/core/ndarray.js';
import type { Dtype, TypedArray } from '../kernels/dtype.js';
import type { Arena } from '../workers/arena.js';

interface Resident {
  readonly arena: Arena;
  /** Calls under way that took this value as an argument. */
  readers: number;
  /** Replaced by a newer value: its block goes back when the last reader is done. */
  retired: boolean;
}

/** Resident values by their data array. */
const residents = new WeakMap<object, Resident>();

/** A new array of `n` elements in `arena` for an update's value (not zeroed: the caller writes every element). */
export function residentArray(arena: Arena, dtype: Dtype, n: number): TypedArray {
  const data = arena.ownedArray(dtype, n);
  residents.set(data, { arena, readers: 0, retired: false });
  return data;
}

/** Whether `value` lives in a block that `retire` may give back. */
export function isResident(value: NdArray): boolean {
  return residents.has(value.data);
}

/**
 * A call takes `values` (from index `from` on) as its arguments: none of their blocks goes back
 * before `stopReading`. (Values handed to the caller are lent out and never go back: a call's
 * own arguments need no count.)
 */
export function startReading(values: readonly NdArray[], from = 0): void {
  for (let i = from; i < values.length; i++) {
    const r = residents.get(values[i]!.data);
    if (r) r.readers += 1;
  }
}

/** The call that took `values` (startReading, from the same index) is over. */
export function stopReading(values: readonly NdArray[], from = 0): void {
  for (let i = from; i < values.length; i++) {
    const v = values[i]!;
    const r = residents.get(v.data);
    if (!r) continue;
    r.readers -= 1;
    if (r.readers === 0 && r.retired) giveBack(v.data, r);
  }
}

/**
 * `value` is no longer its variable's value (and was never lent out to anyone): its block goes
 * back now, or when the last call reading it is over.
 */
export function retire(value: NdArray): void {
  const r = residents.get(value.data);
  if (!r || r.retired) return;
  r.retired = true;
  if (r.readers === 0) giveBack(value.data, r);
}

function giveBack(data: TypedArray, r: Resident): void {
  residents.delete(data);
  r.arena.giveBack(data);
}
