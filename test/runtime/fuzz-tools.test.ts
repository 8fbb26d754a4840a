// The fuzzer's own parts: a comparison that missed differences, a slice length that disagreed
// with Python, or a seed that did not replay would let the fuzzer pass without testing anything.
import t from 'tap';
import { makeNdArray } from '../../src/tensor/core/ndarray.js';
import { weft } from '../helpers.js';
import { bitsDiffer, farFrom } from './fuzz-check.js';
import { makeCase, sliceLength } from './fuzz-graph.js';
import { stridedCopy } from './fuzz-random.js';

const f64 = (xs: number[]): weft.NdArray => makeNdArray(Float64Array.from(xs), [xs.length]);
const f32 = (xs: number[]): weft.NdArray => makeNdArray(Float32Array.from(xs), [xs.length]);

t.test('sliceLength follows Python (len(range(n)[start:stop:step]))', (t) => {
  // [n, start, stop, step, Python's answer]
  const cases: Array<[number, number | null, number | null, number, number]> = [
    [10, null, null, 1, 10],
    [10, null, null, -1, 10],
    [10, 8, 2, -2, 3],
    [10, -3, null, 1, 3],
    [5, 10, null, 1, 0],
    [5, -10, null, 2, 3],
    [5, null, -10, -1, 5],
    [5, 3, 3, 1, 0],
    [7, 1, 6, 3, 2],
    [7, 6, -8, -5, 2],
    [0, null, null, -2, 0],
    [1, -1, null, -1, 1],
  ];
  for (const [n, start, stop, step, want] of cases) t.equal(sliceLength(n, start, stop, step), want, `range(${n})[${start ?? ''}:${stop ?? ''}:${step}]`);
  t.end();
});

t.test('bitsDiffer sees every bit, shape and storage class', (t) => {
  t.equal(bitsDiffer(f64([1, 2, NaN]), f64([1, 2, NaN])), undefined, 'equal bits (NaN included)');
  t.match(bitsDiffer(f64([1, 2, 3]), f64([1, 2 + 2 ** -51, 3])), /^element 1 is 2 where 2\.0+4/, 'one bit of the mantissa');
  t.match(bitsDiffer(f64([0]), f64([-0])), /^element 0/, 'the sign of zero');
  t.match(bitsDiffer(f32([1]), f64([1])), /^storage Float32Array/, 'the storage class');
  t.match(bitsDiffer(f64([1, 2]), f64([1, 2, 3])), /^shape \[2\] where \[3\]/, 'the shape');
  const x = makeNdArray(Float64Array.from([1, 2, 3, 4, 5, 6]), [2, 3]);
  t.equal(bitsDiffer(stridedCopy(x), x), undefined, 'a non-contiguous copy compares by its elements');
  t.end();
});

t.test('farFrom allows a dtype-sized error and no more', (t) => {
  t.equal(farFrom(f32([100, 1e-7]), f32([100.005, 0]), 'float32'), undefined, 'float32 within 1e-4');
  t.match(farFrom(f32([100]), f32([100.1]), 'float32'), /^1 of 1 elements differ/, 'float32 beyond 1e-4');
  t.match(farFrom(f64([1 + 1e-8]), f64([1]), 'float64'), /^1 of 1 elements differ/, 'float64 beyond 1e-9');
  t.equal(farFrom(f64([NaN, Infinity]), f64([NaN, Infinity]), 'float64'), undefined, 'NaN and infinities');
  t.match(farFrom(f64([Infinity]), f64([-Infinity]), 'float64'), /differ/, 'infinities of the other sign');
  const ints = (xs: number[]): weft.NdArray => makeNdArray(Int32Array.from(xs), [xs.length]);
  t.match(farFrom(ints([3]), ints([4]), 'int32'), /differ/, 'integers are exact');
  t.end();
});

t.test('a seed makes the same graph and values every time', (t) => {
  for (const seed of [3, 18, 42]) {
    const a = makeCase(seed);
    const b = makeCase(seed);
    t.same(a.steps, b.steps, `seed ${seed}: steps`);
    a.valueSets.forEach((set, k) => set.forEach((x, i) => t.equal(bitsDiffer(x, b.valueSets[k]![i]!), undefined, `seed ${seed}: value set ${k}, input ${i}`)));
  }
  t.notSame(makeCase(1).steps, makeCase(2).steps, 'other seeds, other graphs');
  t.end();
});
