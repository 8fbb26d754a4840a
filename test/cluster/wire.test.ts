// The binary frames call values travel in (src/cluster/wire.ts): every dtype and rank round-trips
// bit for bit (non-contiguous views too), literals keep their kind for the worker's filter, and
// frames that are too large or malformed are refused with errors that name them.
import t from 'tap';
import ndarray from 'ndarray';
import { decodeFrame, encodeFrame, fromWireValue, MAX_FRAME_BYTES, toWireValue, valuesOfText, frameText } from '../../src/cluster/wire.js';
import { rng, throwsExactly, weft } from '../helpers.js';


function elements(a: weft.NdArray): number[] {
  const out: number[] = [];
  const flat = weft.tolist(a);
  const walk = (x: unknown): void => (Array.isArray(x) ? x.forEach(walk) : void out.push(x as number));
  walk(flat);
  return out;
}

t.test('every dtype and rank round-trips bit for bit, views as their elements in C order', async (t) => {
  const r = rng(3);
  const dtypes = ['float32', 'float64', 'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'] as const;
  const values = dtypes.map((d, i) => (d.startsWith('float') ? r.normal([2, 3, i + 1], { dtype: d }) : r.integers([i + 1, 2], 0, 100, d)));
  values.push(ndarray(new Float64Array([NaN, -0, Infinity, -Infinity, 5e-324]), [5]) as weft.NdArray);
  const base = r.normal([4, 5], { dtype: 'float32' });
  values.push(base.transpose(1, 0).hi(4, 3).step(-1, 1) as weft.NdArray);
  values.push(ndarray(new Float32Array([7]), []) as weft.NdArray);
  const back = decodeFrame(encodeFrame(values.map((v) => toWireValue(v, 'v')), 'test'), 'test');
  t.equal(back.length, values.length, 'as many values');
  back.forEach((b, i) => {
    const a = values[i]!;
    if (b.kind !== 'array') return t.fail(`value ${i} came back as a literal`);
    t.same(b.array.shape, a.shape, `value ${i}: shape`);
    t.equal(b.array.data.constructor, a.data.constructor, `value ${i}: dtype`);
    t.same(elements(b.array).map((x) => Object.is(x, -0) ? '-0' : String(x)), elements(a).map((x) => Object.is(x, -0) ? '-0' : String(x)), `value ${i}: elements`);
  });
});

t.test('JS literals stay literals: numbers, booleans, nested arrays', async (t) => {
  const cases: unknown[] = [3.5, true, [[1, 2], [3, 4]], [true, false, true], [], [[[]]]];
  const back = decodeFrame(encodeFrame(cases.map((c) => toWireValue(c, 'v')), 'test'), 'test');
  t.same(back.map(fromWireValue), cases, 'the same JS values on the other side');
  t.equal(back[1]!.kind === 'literal' && back[1]!.bool, true, 'booleans are marked as booleans');
});

t.test('an ndarray over another 1-d ndarray travels as the typed array underneath, as a local call reads it', async (t) => {
  const inner = ndarray(Float32Array.from([0, 1, 2, 3, 4, 5, 6, 7]), [8]).lo(1).step(2);
  const nested = ndarray(inner as unknown as Float32Array, [2, 2], [1, 2]) as unknown as weft.NdArray;
  const [back] = decodeFrame(encodeFrame([toWireValue(nested, 'v')], 'test'), 'test');
  if (back!.kind !== 'array') return t.fail('it came back as a literal');
  t.equal(back!.array.data.constructor, Float32Array, 'its dtype is the storage\'s');
  t.same(weft.tolist(back!.array), [[1, 5], [3, 7]], 'its elements, as scijs reads them');
});

t.test('base64 text round-trips; the frame size limit and malformed frames are named', async (t) => {
  const v = toWireValue(new Int32Array([1, 2, 3]), 'v');
  const [back] = valuesOfText(frameText([v], 'x'), 'x');
  t.same(back!.kind === 'array' && Array.from(back!.array.data), [1, 2, 3], 'through base64');
  const big = toWireValue(ndarray(new Float64Array(MAX_FRAME_BYTES / 8), [MAX_FRAME_BYTES / 8]), 'v');
  await throwsExactly(t, () => encodeFrame([big], 'the arguments of remote f'), RangeError, 'the arguments of remote f take 64.0 MiB; values that travel through Redis are limited to 64 MiB a call');
  await throwsExactly(t, () => decodeFrame(new Uint8Array(12), 'the results'), TypeError, 'the results: not a weft value frame (no WFT1 header)');
  const frame = encodeFrame([v], 'x');
  await throwsExactly(t, () => decodeFrame(frame.subarray(0, frame.length - 8), 'the results'), TypeError, 'the results: not a weft value frame (value 0 is cut short)');
  await throwsExactly(t, () => valuesOfText(42, 'the results'), TypeError, 'the results: expected base64 text of a value frame, got number');
  await throwsExactly(t, () => toWireValue({ a: 1 }, 'input 0 (x) of the function'), TypeError, "input 0 (x) of the function: object cannot be a call's value; give an ndarray, a typed array, a nested array or a number");
  await throwsExactly(t, () => toWireValue(new BigInt64Array(2), 'input 0 (x) of the function'), weft.ValueTypeError, 'input 0 (x) of the function: typed arrays of BigInt64Array are not supported');
});
