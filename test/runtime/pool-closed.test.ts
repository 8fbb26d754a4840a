// A closed pool is closed for everything (issue 21 item 10): every call of a function compiled
// on it rejects with PoolClosedError, small calls that would run on the calling thread included;
// compile, pool.array and pool.from refuse at once; functions on the default pool move to a new
// default pool after weft.shutdown(). pool.array checks its shape (no raw RangeError).
import t from 'tap';
import { near, pt, throwsExactly, weft } from '../helpers.js';

t.test('a function on a closed pool rejects every call, small or large, with PoolClosedError', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  const x = pt.vector('x');
  const f = await weft.compile([x], x.mul(2), { pool, name: 'double' });
  near(t, await f([1, 2]), [2, 4], 0, 'works before close');
  await pool.close();
  const message = "function 'double': the pool was closed (pool.close() or weft.shutdown()); create a new pool with weft.createPool()";
  await throwsExactly(t, () => f([1, 2]), weft.PoolClosedError, message, 'a small call');
  await throwsExactly(t, () => f(new Float64Array(1 << 20)), weft.PoolClosedError, message, 'a large call');
  await throwsExactly(
    t,
    () => weft.compile([x], x.mul(3), { pool, name: 'triple' }),
    weft.PoolClosedError,
    'compile (triple): the pool was closed (pool.close() or weft.shutdown()); create a new pool with weft.createPool()',
  );
  await throwsExactly(t, () => pool.array([3]), weft.PoolClosedError, 'pool.array: the pool was closed (pool.close() or weft.shutdown()); create a new pool with weft.createPool()');
  await throwsExactly(t, () => pool.from([1, 2]), weft.PoolClosedError, 'pool.from: the pool was closed (pool.close() or weft.shutdown()); create a new pool with weft.createPool()');
  const g = await weft.compile([x], x.mul(2), { workers: 0 });
  near(t, await g([1, 2]), [2, 4], 0, 'functions without a pool are not affected');
});

t.test('after weft.shutdown() a function on the default pool runs on a new default pool', async (t) => {
  const x = pt.vector('x');
  const f = await weft.compile([x], x.mul(2).sum());
  const big = new Float64Array(1 << 20).fill(0.5);
  near(t, await f(big), 1 << 20, 0, 'before');
  await weft.shutdown();
  near(t, await f([1, 2]), 6, 0, 'a small call after shutdown');
  near(t, await f(big), 1 << 20, 0, 'a large call after shutdown, on the new default pool');
  await weft.shutdown();
});

t.test('pool.array takes a number or an array of whole lengths, and a known dtype', async (t) => {
  const pool = weft.createPool({ workers: 1 });
  t.teardown(() => pool.close());
  t.same(pool.array(3).shape, [3], 'a number is a vector length');
  t.same(pool.array([2, 0, 4], { dtype: 'int32' }).shape, [2, 0, 4]);
  t.equal(pool.array([2]).dtype, 'float64');
  await throwsExactly(t, () => pool.array([-1]), RangeError, 'pool.array: shape[0] is -1; lengths must be whole numbers, 0 or more');
  await throwsExactly(t, () => pool.array([2, 1.5]), RangeError, 'pool.array: shape[1] is 1.5; lengths must be whole numbers, 0 or more');
  await throwsExactly(t, () => pool.array('3' as never), TypeError, 'pool.array: the shape must be a number or an array of lengths, got 3');
  await throwsExactly(
    t,
    () => pool.array([2], { dtype: 'int64' as never }),
    TypeError,
    'pool.array: unknown dtype int64 (one of float32, float64, int8, int16, int32, uint8, uint16, uint32, bool)',
  );
});
