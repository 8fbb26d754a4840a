// SparseTensorType and sparse values: the checks of weft.sparse.csr / csc and of filter (exact
// errors naming the field and position), scipy's canonical form, equality, copies, signatures,
// aliasing, and documents (serialize / deserialize) with sparse variables and constants.
import t from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';
import { denseOf, randomSparse } from './random.js';

const { sparse } = weft;
const csrType = new sparse.SparseTensorType('csr', 'float64');

t.test('csr and csc values: typed arrays, canonical form', async (t) => {
  const v = sparse.csr({ data: [1, 2, 3, 4], indices: [2, 0, 2, 1], indptr: [0, 3, 4], shape: [2, 3] });
  t.equal(v.format, 'csr');
  t.same(v.shape, [2, 3]);
  t.type(v.data, Float64Array);
  t.type(v.indices, Int32Array);
  t.type(v.indptr, Int32Array);
  // Row 0 held columns 2, 0, 2: sorted, and the two values at column 2 summed (1 + 3).
  t.same(Array.from(v.indices), [0, 2, 1]);
  t.same(Array.from(v.data), [2, 4, 4]);
  t.same(Array.from(v.indptr), [0, 2, 3]);
  const w = sparse.csc({ data: new Float32Array([5, 6]), indices: [1, 0], indptr: [0, 2, 2], shape: [2, 2] });
  t.type(w.data, Float32Array, 'Float32Array data gives a float32 matrix');
  t.same(Array.from(w.indices), [0, 1]);
  t.same(Array.from(w.data), [6, 5]);
  t.same(denseOf(w), [[6, 0], [5, 0]]);
  const empty = sparse.csr({ data: [], indices: [], indptr: [0, 0, 0], shape: [2, 0] });
  t.same(empty.shape, [2, 0], 'a matrix with no columns');
  const r = randomSparse(3, 5, 7);
  t.same(denseOf(sparse.csr(r.csr)), r.dense, 'a valid canonical matrix keeps its entries');
  t.same(denseOf(sparse.csc(r.csc)), r.dense);
});

t.test('malformed values: errors name the field, the position and what was expected', async (t) => {
  const E = weft.ValueTypeError;
  const bad = (parts: Record<string, unknown>) => () => sparse.csr(parts as unknown as weft.sparse.SparseParts);
  const base = { data: [1, 2], indices: [0, 1], indptr: [0, 1, 2], shape: [2, 2] };
  await throwsExactly(t, bad({ ...base, indptr: [0, 2] }), E, 'sparse.csr: indptr must have rows + 1 = 3 entries for a csr matrix of shape [2, 2], got 2', 'indptr too short');
  await throwsExactly(t, bad({ ...base, indptr: [1, 1, 2] }), E, 'sparse.csr: indptr[0] must be 0, got 1', 'indptr not starting at 0');
  await throwsExactly(t, bad({ ...base, indptr: [0, 2, 1] }), E, 'sparse.csr: indptr must not decrease, but indptr[2] = 1 < indptr[1] = 2', 'decreasing indptr');
  await throwsExactly(t, bad({ ...base, indptr: [0, 1, 1] }), E, 'sparse.csr: indptr[2] (its last entry) must equal nnz = 2 (the length of data), got 1', 'indptr not ending at nnz');
  await throwsExactly(t, bad({ ...base, indptr: [0, 3, 3] }), E, 'sparse.csr: indptr[1] = 3 exceeds nnz = 2 (the length of data)', 'indptr beyond nnz');
  await throwsExactly(t, bad({ ...base, indices: [0, 5] }), E, 'sparse.csr: indices[1] = 5 is out of range for 2 columns (0 to 1)', 'index too large');
  await throwsExactly(t, bad({ ...base, indices: [-1, 0] }), E, 'sparse.csr: indices[0] = -1 is out of range for 2 columns (0 to 1)', 'negative index');
  // In one row, the first index out of range in storage order is named, sorted row or not.
  const row = (indices: number[]) => bad({ data: indices.map(() => 1), indices, indptr: [0, indices.length], shape: [1, 4] });
  await throwsExactly(t, row([1, 4, 5]), E, 'sparse.csr: indices[1] = 4 is out of range for 4 columns (0 to 3)', 'in an increasing row, the first too large');
  await throwsExactly(t, row([3, 7, -2]), E, 'sparse.csr: indices[1] = 7 is out of range for 4 columns (0 to 3)', 'in an unsorted row, the first out of range');
  await throwsExactly(t, row([2, 2, -1]), E, 'sparse.csr: indices[2] = -1 is out of range for 4 columns (0 to 3)', 'negative, after a duplicate');
  await throwsExactly(t, bad({ ...base, indices: [0] }), E, 'sparse.csr: data has 2 entries but indices has 1; they must have the same length (one column index per stored value)', 'length mismatch');
  await throwsExactly(t, bad({ ...base, indices: [0, NaN] }), E, 'sparse.csr: indices[1] must be an int32 integer, got NaN', 'NaN index');
  await throwsExactly(t, bad({ ...base, indptr: [0, 0.5, 2] }), E, 'sparse.csr: indptr[1] must be an int32 integer, got 0.5', 'fractional indptr');
  await throwsExactly(t, bad({ ...base, shape: [2] }), E, 'sparse.csr: shape must be two non-negative integers [rows, columns], got [2]', 'shape of one length');
  await throwsExactly(t, bad({ ...base, data: 'ab' }), E, 'sparse.csr: data must be an array of numbers, got string', 'data not an array');
  await throwsExactly(t, bad({ ...base, data: [1, '2'] }), E, 'sparse.csr: data[1] must be a number, got string', 'data not numbers');
  await throwsExactly(
    t,
    () => sparse.csc({ data: [1], indices: [3], indptr: [0, 1, 1], shape: [2, 2] }),
    E,
    'sparse.csc: indices[0] = 3 is out of range for 2 rows (0 to 1)',
    'csc indices are rows',
  );
  await throwsExactly(
    t,
    () => sparse.csc({ data: [1], indices: [0], indptr: [0, 1], shape: [3, 2] }),
    E,
    'sparse.csc: indptr must have columns + 1 = 3 entries for a csc matrix of shape [3, 2], got 2',
    'csc indptr per column',
  );
  // NaN data is a value like any other (stored, summed, compared).
  const nan = sparse.csr({ ...base, data: [NaN, 1] } as weft.sparse.SparseParts);
  t.ok(Number.isNaN(nan.data[0]!), 'NaN data is kept');
});

t.test('filter: format, dtype, strictness, downcasts, and the caller named', async (t) => {
  const E = weft.ValueTypeError;
  const v = sparse.csr({ data: [1], indices: [0], indptr: [0, 1], shape: [1, 1] });
  t.equal(csrType.filter(v, { strict: true }), v, 'a valid value of the type passes as it is');
  const cscValue = sparse.csc({ data: [1], indices: [0], indptr: [0, 1], shape: [1, 1] });
  await throwsExactly(t, () => csrType.filter(cscValue), E, 'a value of SparseTensorType(csr, float64): expected a csr matrix, got format "csc"');
  await throwsExactly(t, () => csrType.filter({ data: [1], indices: [0], indptr: [0, 1], shape: [1, 1] }, { strict: true, what: 'x' }), E, 'x: data must be a Float64Array for a float64 matrix (strict), got an array');
  await throwsExactly(t, () => csrType.filter(42, { what: 'x' }), E, 'x: expected a sparse matrix { data, indices, indptr, shape }, got number');
  const f32 = new sparse.SparseTensorType('csr', 'float32');
  await throwsExactly(t, () => f32.filter(v, { what: 'x' }), E, 'x: float64 data cannot be converted to float32 without loss; convert it first, or pass allowInputDowncast: true');
  t.type(f32.filter(v, { allowDowncast: true }).data, Float32Array, 'allowDowncast rounds to float32');
  t.type(csrType.filter({ data: new Float32Array([1]), indices: [0], indptr: [0, 1], shape: [1, 1] }).data, Float64Array, 'float32 data widens');
  const s = sparse.csrMatrix('s');
  const fn = await weft.compile([s], sparse.dense(s));
  await throwsExactly(t, () => fn({ data: [1], indices: [4], indptr: [0, 1], shape: [1, 2] } as unknown as weft.sparse.SparseValue), E, 'input 0 (s) of the function: indices[0] = 4 is out of range for 2 columns (0 to 1)', 'a call names its input');
  t.throws(() => new sparse.SparseTensorType('coo' as 'csr'), { message: 'SparseTensorType: format must be "csr" or "csc", got "coo"' });
  t.throws(() => new sparse.SparseTensorType('csr', 'int32' as 'float64'), { message: 'SparseTensorType: dtype must be "float32" or "float64", got "int32"' });
});

t.test('equality as matrices, copies, signatures and aliasing', async (t) => {
  const a = sparse.csr({ data: [1, 0, 2], indices: [0, 1, 1], indptr: [0, 2, 3], shape: [2, 2] });
  const b = sparse.csr({ data: [1, 2], indices: [0, 1], indptr: [0, 1, 2], shape: [2, 2] });
  t.ok(csrType.valuesEq(a, b), 'an explicit 0 equals an absent entry');
  t.notOk(csrType.valuesEq(a, sparse.csr({ data: [1, 3], indices: [0, 1], indptr: [0, 1, 2], shape: [2, 2] })), 'different values');
  t.notOk(csrType.valuesEq(b, sparse.csr({ data: [1, 2], indices: [0, 1], indptr: [0, 1, 2], shape: [2, 3] })), 'different shapes');
  const near = sparse.csr({ data: [1 + 1e-9, 2], indices: [0, 1], indptr: [0, 1, 2], shape: [2, 2] });
  t.notOk(csrType.valuesEq(b, near));
  t.ok(csrType.valuesEqApprox(b, near), 'within float64 tolerances');
  const n1 = sparse.csr({ data: [NaN], indices: [0], indptr: [0, 1], shape: [1, 1] });
  t.ok(csrType.valuesEq(n1, csrType.copyValue(n1)), 'NaN matches NaN');
  const c = csrType.copyValue(b);
  t.ok(csrType.valuesEq(b, c));
  t.notOk(csrType.mayShareMemory(b, c), 'a copy shares nothing');
  t.ok(csrType.mayShareMemory(b, { ...c, data: b.data }), 'shared data is shared memory');
  t.equal(csrType.valueSignature(b), csrType.valueSignature(c), 'equal values sign alike');
  t.not(csrType.valueSignature(b), csrType.valueSignature(near), 'other values sign otherwise');
  const data = new Float64Array([1, 2]);
  const source = { data, indices: new Int32Array([0, 1]), indptr: new Int32Array([0, 1, 2]), shape: [2, 2] };
  const filtered = csrType.filter(source);
  t.equal(filtered.data, data, 'filter takes the arrays as they are');
  t.not(csrType.ownValue(filtered, source).data, data, 'ownValue copies what the caller still holds');
});

t.test('documents: sparse variables, constants and ops survive a round trip', async (t) => {
  const r = randomSparse(11, 4, 5);
  const s = sparse.csrMatrix('s');
  const d = pt.matrix('d');
  const k = new sparse.SparseTensorType('csc').makeConstant(sparse.csc({ ...r.csc, data: r.csc.data.map((x, i) => (i === 0 ? NaN : x)) }), 'k');
  const out = [
    sparse.dense(sparse.add(sparse.mul(s, d), sparse.transpose(sparse.transpose(k)))),
    sparse.sum(s, { axis: 1, sparseGrad: true }),
    sparse.structuredDot(sparse.transpose(s), d),
    sparse.dense(sparse.dot(s, sparse.transpose(k))),
  ];
  const text = weft.serialize(out);
  t.match(text, /"codec":"SparseTensorType","props":\{"format":"csc","dtype":"float64"\}/, 'the type by its registered class');
  t.match(text, /"NaN"/, 'NaN data spelled as a string');
  const back = weft.deserialize(text);
  t.equal(back.outputs.length, 4);
  const values = [sparse.csr(r.csr), r.dense];
  const want = await (await weft.compile([s, d], out))(...(values as [weft.sparse.SparseValue, number[][]]));
  const got = await (await weft.compile(back.inputs, back.outputs))(...(values as weft.InputValue[]));
  (want as weft.NdArray[]).forEach((w, i) => t.same(weft.tolist((got as weft.NdArray[])[i]!), weft.tolist(w), `output ${i}`));
  // A document whose sparse constant is malformed is refused at the value, with its path.
  const broken = text.replace(/"indptr":\[0,/, '"indptr":[1,');
  t.throws(() => weft.deserialize(broken), { name: 'DeserializeError', message: /indptr\[0\] must be 0, got 1$/ });
});

t.test('documents: every sparse op reads back as an equal op', async (t) => {
  const s = sparse.csrMatrix('s', 'float32');
  const c = sparse.cscMatrix('c');
  const d = pt.matrix('d');
  const v = pt.vector('v');
  const outputs: weft.Variable[] = [
    sparse.asSparse(d, 'csc'), sparse.dense(s, { sparseGrad: false }), sparse.toFormat(s, 'csc'), sparse.transpose(c), sparse.neg(s),
    sparse.add(s, c), sparse.add(s, d), sparse.mul(s, c), sparse.mul(c, d), sparse.sub(d, s),
    sparse.structuredDot(s, d), sparse.dot(d, c), sparse.dot(s, c), sparse.samplingDot(d, d, c),
    sparse.sum(s), sparse.sum(c, { axis: 0, sparseGrad: true }), sparse.structuredPow(c, 1.5), sparse.structuredMaximum(s, -1),
    sparse.getBlock(s, 0, 1, 0, 2), sparse.padBlock(c, 1, 1, 4, 4), sparse.vstack([s, c], { format: 'csc' }), sparse.hstack([c, s]),
    sparse.diag(c), sparse.squareDiagonal(v, 'csr'), sparse.shape(s)[1], sparse.csrFromData(v, new Int32Array([0]), new Int32Array([0, 1]), new Int32Array([1, 1])),
    ...weft.grad(pt.sum(sparse.structuredDot(s, d)).add(pt.sum(sparse.dense(sparse.csrFromData(v, new Int32Array([0]), new Int32Array([0, 1]), new Int32Array([1, 1]))))), [s, v]),
  ];
  const back = weft.deserialize(weft.serialize(outputs));
  const ops = (vs: readonly weft.Variable[]) => vs.map((o) => o.owner!.op);
  const mine = ops(outputs);
  ops(back.outputs).forEach((op, i) => t.ok(op.equals(mine[i]!), `${mine[i]}`));
});
