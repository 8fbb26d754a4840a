// The pools users make and pass to compile: a WorkerPool (threads and the shared arena, in
// workers/) with the arrays users put in its memory (pool.array, pool.from: ndarrays, and sparse
// matrices part by part), which functions on the pool read in place; and the default pool that
// functions use when they are given none.
import { copyView } from '../kernels/copy.js';
import { STORAGE, type Dtype } from '../kernels/dtype.js';
import { sizeOf } from '../kernels/view.js';
import { constant } from '../tensor/core/as-tensor.js';
import { config } from '../tensor/core/config.js';
import { makeNdArray, type NdArray } from '../tensor/core/ndarray.js';
import type { TensorLike } from '../tensor/core/variable.js';
import { PoolClosedError, WorkerPool, type PoolOptions } from '../workers/pool.js';
import { dtypeOfData, isSparseValue, makeSparse, trustedSparse, type SparseValue } from '../sparse/value.js';

/** The lengths of a shape for pool.array: a number is a vector's length; each must be a whole number >= 0. */
function lengthsOf(shape: number | readonly number[], where: string): number[] {
  const lengths = typeof shape === 'number' ? [shape] : shape;
  if (!Array.isArray(lengths)) throw new TypeError(`${where}: the shape must be a number or an array of lengths, got ${String(shape)}`);
  lengths.forEach((n, i) => {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new RangeError(`${where}: shape[${i}] is ${String(n)}; lengths must be whole numbers, 0 or more`);
    }
  });
  return [...lengths];
}

export class Pool extends WorkerPool {
  /**
   * A zero-filled ndarray in this pool's shared memory: functions on this pool read it in place
   * instead of copying it into each call. Keep the returned ndarray (not only views of its data)
   * while you use it: its memory returns to the pool when it is collected.
   */
  array(shape: number | readonly number[], options: { dtype?: Dtype } = {}): NdArray {
    if (this.closed) throw new PoolClosedError('pool.array');
    const lengths = lengthsOf(shape, 'pool.array');
    const dtype = options.dtype ?? config.floatX;
    if (!(dtype in STORAGE)) throw new TypeError(`pool.array: unknown dtype ${String(dtype)} (one of ${Object.keys(STORAGE).join(', ')})`);
    return makeNdArray(this.arena.array(dtype, sizeOf(lengths)), lengths);
  }

  /**
   * `value` (an ndarray, nested array, number or typed array) copied into this pool's shared
   * memory; a sparse matrix (weft.sparse.csr / csc) is copied part by part, and functions read its
   * parts in place too.
   */
  from(value: SparseValue): SparseValue;
  from(value: TensorLike, options?: { dtype?: Dtype }): NdArray;
  from(value: TensorLike | SparseValue, options: { dtype?: Dtype } = {}): NdArray | SparseValue {
    if (this.closed) throw new PoolClosedError('pool.from');
    if (isSparseValue(value)) {
      const copy = <A extends SparseValue['data'] | Int32Array>(a: A, dtype: Dtype): A => {
        const to = this.arena.array(dtype, a.length) as A;
        to.set(a);
        return to;
      };
      const v = makeSparse(value.format, value, { what: 'pool.from' });
      return trustedSparse(v.format, v.shape, copy(v.data, dtypeOfData(v.data)), copy(v.indices, 'int32'), copy(v.indptr, 'int32'));
    }
    const c = constant(value, options.dtype ? { dtype: options.dtype } : {});
    const out = this.array(c.data.shape, { dtype: c.dtype });
    copyView(c.data, out);
    return out;
  }
}

let defaultPool: Pool | undefined;

/** A new pool of worker threads. */
export function createPool(options: PoolOptions = {}): Pool {
  return new Pool(options);
}

/** The pool functions use when they are given none (made on first use, sized to the machine). */
export function getDefaultPool(): Pool {
  if (!defaultPool || defaultPool.closed) defaultPool = new Pool();
  return defaultPool;
}

/** Ends the default pool's threads (a later call makes a new one). */
export async function shutdown(): Promise<void> {
  const pool = defaultPool;
  defaultPool = undefined;
  await pool?.close();
}
