// deserialize on malformed and hostile documents: each is refused with a DeserializeError that
// names the field and what was expected, nothing is built when the checks fail (no variable is
// made), and Object.prototype stays untouched. Covers non-JSON text, wrong format and version,
// unknown op types (including names of Object.prototype's members), `__proto__` and
// `constructor` fields, strings where numbers belong, forward and self references (cycles),
// huge shapes and the element budget, mismatched data lengths, ops that would name code
// (unknown scalar ops in a Composite, asOp), deep nesting, and function documents.
import t, { type Test } from 'tap';
import { pt, throwsExactly, weft } from '../helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort();
const arrayProtoBefore = Object.getOwnPropertyNames(Array.prototype).sort();

const x = pt.matrix('x');
const w = weft.shared([[1, 2], [3, 4]], { name: 'w' });
/** variables: 0 x, 1 w, 2 dot, 3 const 1, 4 dimshuffle, 5 add, 6 sum; nodes: Dot, DimShuffle, add, Sum. */
const BASE: Doc = JSON.parse(weft.serialize(x.dot(w).add(1).sum({ axis: 0 })));

/** A copy of the base document changed by `change` (which may return text instead). */
function variant(change: (d: Doc) => Doc | string | void): string {
  const d = structuredClone(BASE);
  const r = change(d);
  return typeof r === 'string' ? r : JSON.stringify(r ?? d);
}

/** The id the next variable will get: unchanged by a load that fails its checks. */
function nextVariableId(): number {
  return pt.scalar().id + 1;
}

async function refused(t: Test, text: string, message: string, what = message): Promise<void> {
  const before = nextVariableId();
  await throwsExactly(t, () => weft.deserialize(text), weft.DeserializeError, message, what);
  t.equal(nextVariableId(), before + 1, `${what}: no variable was built`);
}

const ALLOWED_ROOT = 'format, version, kind, shared, graphs, variables, nodes, inputs, outputs, name, inputOptions, updates';
const DTYPE_LIST = '"float32", "float64", "int8", "int16", "int32", "uint8", "uint16", "uint32", "bool"';

t.test('the base document loads', async (t) => {
  const copy = weft.deserialize(JSON.stringify(BASE));
  t.equal(copy.outputs.length, 1);
  t.equal(String(copy.outputs[0]!.type), 'TensorType(float64, (?,))');
});

t.test('not a document', async (t) => {
  await refused(t, '{"format":', 'document: not valid JSON (Unexpected end of JSON input)');
  t.throws(() => weft.deserialize('NaN'), { name: 'DeserializeError', message: /^document: not valid JSON \(.+\)$/ }, 'NaN is not JSON');
  await refused(t, '[]', 'document: expected an object, got an array of 0');
  await refused(t, '"weft-graph"', 'document: expected an object, got "weft-graph"');
  await refused(t, 'null', 'document: expected an object, got null');
  await throwsExactly(t, () => weft.deserialize(42 as unknown as string), weft.DeserializeError, 'document: expected a JSON string, got 42');
  await refused(t, variant((d) => { d.format = 'theano-pickle'; }), 'format: expected "weft-graph", got "theano-pickle"');
  await refused(t, variant((d) => { d.version = 2; }), 'version: version 2 is not supported; this weft reads version 1');
  await refused(t, variant((d) => { d.version = '1'; }), 'version: expected an integer, got "1"');
  await refused(t, variant((d) => { d.kind = 'module'; }), 'kind: expected one of "variables", "function", got "module"');
  await refused(t, variant((d) => { delete d.nodes; }), 'document: missing field "nodes"');
  await refused(t, variant((d) => { d.name = 'f'; }), 'document: unexpected field "name"; expected only format, version, kind, shared, graphs, variables, nodes, inputs, outputs');
});

t.test('__proto__, constructor and prototype pollution', async (t) => {
  const text = JSON.stringify(BASE);
  await refused(
    t,
    text.replace('{"format"', '{"__proto__":{"polluted":true},"format"'),
    `document: unexpected field "__proto__"; expected only ${ALLOWED_ROOT}`,
  );
  await refused(t, text.replace('{"format"', '{"constructor":{"prototype":{"polluted":true}},"format"'), `document: unexpected field "constructor"; expected only ${ALLOWED_ROOT}`);
  await refused(
    t,
    text.replace('"props":{"kind":"sum"', '"props":{"__proto__":{"polluted":true},"kind":"sum"'),
    'nodes[3].op.props: unexpected field "__proto__"; expected only kind, axis',
  );
  await refused(
    t,
    text.replace('{"kind":"input"', '{"__proto__":{"polluted":true},"kind":"input"'),
    'variables[0]: unexpected field "__proto__"; expected only kind, type, value, shared, node, index, name',
  );
  await refused(
    t,
    text.replace('"data":[1,2,3,4]', '"data":[1,2,3,4],"__proto__":{"polluted":true}'),
    'shared[0].value: unexpected field "__proto__"; expected only dtype, shape, data',
  );
  await refused(
    t,
    text.replace('"type":"Dot"', '"type":"Dot","constructor":{"name":"Function"}'),
    'nodes[0].op: unexpected field "constructor"; expected only type, props',
  );
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'eval', 'Function']) {
    await refused(t, variant((d) => { d.nodes[0].op.type = name; }), `nodes[0].op.type: unknown op type ${JSON.stringify(name)}; only registered op codecs can be read`);
  }
  // Names are plain strings: a variable may be called __proto__.
  const copy = weft.deserialize(variant((d) => { d.variables[0].name = '__proto__'; d.shared[0].name = 'constructor'; }));
  t.equal(copy.inputs[0]!.name, '__proto__');
  t.equal(copy.shared[0]!.name, 'constructor');
});

t.test('strings where numbers are expected, and other wrong kinds', async (t) => {
  await refused(t, variant((d) => { d.nodes[3].op.props.axis = ['x']; }), 'nodes[3].op.props.axis[0]: expected an integer, got "x"');
  await refused(t, variant((d) => { d.nodes[3].op.props.axis = '0'; }), 'nodes[3].op.props.axis: expected an array, got "0"');
  await refused(t, variant((d) => { d.variables[2].index = '0'; }), 'variables[2].index: expected an integer, got "0"');
  await refused(t, variant((d) => { d.nodes[0].inputs = ['0', 1]; }), 'nodes[0].inputs[0]: expected an integer, got "0"');
  await refused(t, variant((d) => { d.nodes[0].inputs = [0.5, 1]; }), 'nodes[0].inputs[0]: expected an integer, got 0.5');
  await refused(t, variant((d) => { d.shared[0].value.data = [1, '2', 3, 4]; }), 'shared[0].value.data[1]: expected a finite number or one of "NaN", "Infinity", "-Infinity", "-0", got "2"');
  await refused(t, variant((d) => { d.nodes[1].op.props.inputNdim = true; }), 'nodes[1].op.props.inputNdim: expected an integer, got true');
  await refused(t, variant((d) => { d.nodes[2].op.props.inplace = { 0: 1 }; }), 'nodes[2].op.props.inplace: expected an array, got an object');
  await refused(t, variant((d) => { d.variables[0].type.dtype = 'float128'; }), `variables[0].type.dtype: expected one of ${DTYPE_LIST}, got "float128"`);
  await refused(t, variant((d) => { d.variables[0].kind = 'function'; }), 'variables[0].kind: expected one of "input", "constant", "shared", "output", got "function"');
  await refused(t, variant((d) => { d.variables[0].name = 7; }), 'variables[0].name: expected a string, got 7');
  await refused(t, variant((d) => { d.variables[3].value.data = [1e400]; }).replace('"data":[null]', '"data":[1e400]'), 'variables[3].value.data[0]: expected a finite number or one of "NaN", "Infinity", "-Infinity", "-0", got Infinity');
});

t.test('references: out of range, forward, to itself, twice', async (t) => {
  await refused(t, variant((d) => { d.nodes[0].inputs = [0, 99]; }), 'nodes[0].inputs[1]: expected an integer from 0 to 6, got 99');
  await refused(t, variant((d) => { d.nodes[0].inputs = [0, -1]; }), 'nodes[0].inputs[1]: expected an integer from 0 to 6, got -1');
  await refused(
    t,
    variant((d) => { d.nodes[0].inputs = [0, 5]; }),
    'nodes[0].inputs[1]: variable 5 is an output of node 2, which does not come before this node (0); nodes must follow the nodes they read',
  );
  await refused(
    t,
    variant((d) => { d.nodes[2].inputs = [5, 4]; }),
    'nodes[2].inputs[0]: variable 5 is an output of node 2, which does not come before this node (2); nodes must follow the nodes they read',
  );
  await refused(t, variant((d) => { d.variables[6].node = 9; }), 'variables[6].node: expected an integer from 0 to 3, got 9');
  await refused(t, variant((d) => { d.variables[6].index = 1; }), 'nodes[3]: output 0 of this node is missing from the variables (1 variables are its outputs)');
  await refused(t, variant((d) => { d.variables[6].node = 2; }), 'variables[6].index: output 0 of node 2 is already variable 5');
  await refused(t, variant((d) => { d.variables[1].shared = 3; }), 'variables[1].shared: expected an integer from 0 to 0, got 3');
  await refused(t, variant((d) => { d.variables.push({ kind: 'shared', shared: 0 }); }), 'variables[7]: shared variable 0 is already variable 1');
  await refused(t, variant((d) => { d.inputs = []; }), 'variables[0]: input variable 0 is not listed in the graph\'s inputs');
  await refused(t, variant((d) => { d.inputs = [0, 0]; }), 'inputs[1]: variable 0 is listed twice');
  await refused(t, variant((d) => { d.inputs = [0, 3]; }), 'inputs[1]: variable 3 is a constant; graph inputs are inputs or shared variables');
  await refused(t, variant((d) => { d.outputs = [7]; }), 'outputs[0]: expected an integer from 0 to 6, got 7');
  await refused(t, variant((d) => { d.shared = []; }), 'variables[1].shared: refers to a shared variable, but the document\'s "shared" is empty');

  // Inner graphs: a graph may use only the graphs before it (no cycles through the table).
  const identity = { variables: [{ kind: 'input', type: { dtype: 'float64', shape: [] } }], nodes: [], inputs: [0], outputs: [0] };
  const ofg = (graph: number, extra: Doc = {}): Doc => ({
    type: 'OpFromGraph',
    props: { graph, inline: false, name: null, connectionPattern: null, lopOverrides: null, ropOverrides: null, ...extra },
  });
  const scalarDoc = (graphs: Doc[], op: Doc): string =>
    JSON.stringify({
      format: 'weft-graph',
      version: 1,
      kind: 'variables',
      shared: [],
      graphs,
      variables: [{ kind: 'input', type: { dtype: 'float64', shape: [] } }, { kind: 'output', node: 0, index: 0, type: { dtype: 'float64', shape: [] } }],
      nodes: [{ op, inputs: [0] }],
      inputs: [0],
      outputs: [1],
    });
  t.equal(weft.deserialize(scalarDoc([identity], ofg(0))).outputs.length, 1, 'a valid OpFromGraph document loads');
  const selfRef = { ...identity, variables: [...identity.variables, { kind: 'output', node: 0, index: 0, type: { dtype: 'float64', shape: [] } }], nodes: [{ op: ofg(0), inputs: [0] }], outputs: [1] };
  await refused(
    t,
    scalarDoc([selfRef], ofg(0)),
    'graphs[0].nodes[0].op.props.graph: refers to an inner graph, but no graph comes before this one in the document\'s "graphs"',
  );
  const ahead = { ...selfRef, nodes: [{ op: ofg(1), inputs: [0] }] };
  await refused(t, scalarDoc([identity, ahead, identity], ofg(0)).replace('"graph":1', '"graph":2'), 'graphs[1].nodes[0].op.props.graph: expected an integer from 0 to 0, got 2');
  await refused(t, scalarDoc([identity], ofg(1)), 'nodes[0].op.props.graph: expected an integer from 0 to 0, got 1');
  // Overrides nested deeper than the limit.
  let deep: Doc = null;
  for (let i = 0; i < 20; i++) deep = ofg(0, { lopOverrides: deep });
  const deepPath = `nodes[0].op${'.props.lopOverrides'.repeat(16)}`;
  await refused(t, scalarDoc([identity], deep), `${deepPath}: ops nested more than 16 deep`);
  await refused(t, scalarDoc([identity], ofg(0, { lopOverrides: { type: 'Dot', props: {} } })), 'nodes[0].op.props.lopOverrides.type: expected "OpFromGraph" (overrides are OpFromGraph ops), got "Dot"');
});

t.test('values: huge shapes, the element budget, data lengths, element kinds', async (t) => {
  await refused(
    t,
    variant((d) => { d.shared[0].value.shape = [1e9, 1e9]; }),
    'shared[0].value.shape: a value of shape [1000000000, 1000000000] would exceed the document\'s limit on value elements (134217728 left); raise maxElements to load it',
  );
  await refused(t, variant((d) => { d.shared[0].value.shape = [1e300, 2]; }), 'shared[0].value.shape[0]: expected an integer from 0 to 2147483647, got 1e+300');
  await refused(t, variant((d) => { d.shared[0].type.shape = [1e12, null]; }), 'shared[0].type.shape[0]: expected an integer from 0 to 2147483647, got 1000000000000');
  await refused(t, variant((d) => { d.variables[0].type.shape = new Array(65).fill(null); }), 'variables[0].type.shape: expected at most 64 elements, got 65');
  await refused(t, variant((d) => { d.shared[0].value.data = [1, 2, 3]; }), 'shared[0].value.data: expected 4 elements (shape [2, 2]), got 3');
  await refused(t, variant((d) => { d.shared[0].value.data = [1, 2, 3, 4, 5]; }), 'shared[0].value.data: expected 4 elements (shape [2, 2]), got 5');
  await refused(t, variant((d) => { d.shared[0].value.shape = [2]; }), 'shared[0].value.shape: expected 2 lengths (the value of a TensorType(float64, (?, ?))), got 1');
  await refused(t, variant((d) => { d.shared[0].type.shape = [3, null]; }), 'shared[0].value.shape[0]: expected 3 (TensorType(float64, (3, ?)) has that static length), got 2');
  await refused(t, variant((d) => { d.shared[0].value.dtype = 'float32'; }), 'shared[0].value.dtype: expected "float64" (the dtype of TensorType(float64, (?, ?))), got "float32"');
  const asInt8 = (data: unknown[]) => (d: Doc) => {
    d.shared[0].type.dtype = 'int8';
    d.shared[0].value.dtype = 'int8';
    d.shared[0].value.data = data;
  };
  await refused(t, variant(asInt8([1, 2, 300, 4])), 'shared[0].value.data[2]: expected an integer from -128 to 127 (int8), got 300');
  await refused(t, variant(asInt8([1, 2, 'NaN', 4])), 'shared[0].value.data[2]: expected an integer from -128 to 127 (int8), got "NaN"');
  await refused(t, variant(asInt8([1, 2.5, 3, 4])), 'shared[0].value.data[1]: expected an integer from -128 to 127 (int8), got 2.5');
  const asBool = (d: Doc) => {
    d.shared[0].type.dtype = 'bool';
    d.shared[0].value.dtype = 'bool';
    d.shared[0].value.data = [0, 1, 2, 1];
  };
  await refused(t, variant(asBool), 'shared[0].value.data[2]: expected an integer from 0 to 1 (bool), got 2');
  // The budget counts every value of the document.
  await throwsExactly(
    t,
    () => weft.deserialize(JSON.stringify(BASE), { maxElements: 4 }),
    weft.DeserializeError,
    'variables[3].value.shape: a value of shape [] would exceed the document\'s limit on value elements (0 left); raise maxElements to load it',
  );
  t.equal(weft.deserialize(JSON.stringify(BASE), { maxElements: 5 }).outputs.length, 1, 'within the budget');
  await throwsExactly(t, () => weft.deserialize(JSON.stringify(BASE), { maxElements: -1 }), RangeError, 'deserialize: maxElements must be a non-negative integer, got -1');
});

t.test('deep nesting', async (t) => {
  const text = JSON.stringify(BASE);
  await refused(t, '['.repeat(100000) + ']'.repeat(100000), 'document: expected an object, got an array of 1');
  await refused(t, text.replace('"data":[1,2,3,4]', `"data":${'['.repeat(100000)}${']'.repeat(100000)}`), 'shared[0].value.data: expected 4 elements (shape [2, 2]), got 1');
  await refused(t, text.replace('"data":[1,2,3,4]', `"data":[${'['.repeat(1000)}${']'.repeat(1000)},2,3,4]`), 'shared[0].value.data[0]: expected a finite number or one of "NaN", "Infinity", "-Infinity", "-0", got an array of 1');
  await refused(t, text.replace('"props":{}', `"props":{"a":${'['.repeat(100000)}${']'.repeat(100000)}}`), 'nodes[0].op.props: unexpected field "a"; expected no fields');
  await refused(t, text.replace('"newOrder":["x","x"]', `"newOrder":[${'['.repeat(50000)}${']'.repeat(50000)},"x"]`), 'nodes[1].op.props.newOrder[0]: expected an integer, got an array of 1');
});

t.test('ops that would name code, and props that do not make an op', async (t) => {
  const composite = (steps: Doc[], inputDtypes = ['float64', 'float64']) => (d: Doc) => {
    d.nodes[2].op = { type: 'Composite', props: { inputDtypes, steps, inplace: [] } };
  };
  t.equal(weft.deserialize(variant(composite([{ op: 'add', args: [0, 1], dtype: 'float64' }]))).outputs.length, 1, 'a valid Composite loads');
  for (const name of ['eval', 'constructor', '__proto__', 'toString', 'Function', 'process.exit']) {
    await refused(
      t,
      variant(composite([{ op: name, args: [0, 1], dtype: 'float64' }])),
      `nodes[2].op.props.steps[0].op: unknown scalar op ${JSON.stringify(name)}; expected a name from weft's catalog (add, mul, exp, ...)`,
    );
  }
  await refused(t, variant(composite([{ op: 'add', args: [0, 1], dtype: 'float64', code: 'process.exit(1)' }])), 'nodes[2].op.props.steps[0]: unexpected field "code"; expected only op, args, dtype');
  await refused(t, variant(composite([{ op: { code: 'x' }, args: [0, 1], dtype: 'float64' }])), 'nodes[2].op.props.steps[0].op: expected a scalar op: a catalog name, { "cast": dtype } or { "composite": ... }, got an object');
  await refused(t, variant(composite([{ op: 'add', args: [0, 2], dtype: 'float64' }])), 'nodes[2].op.props.steps[0].args[1]: expected an integer from 0 to 1, got 2');
  await refused(t, variant(composite([{ op: 'exp', args: [0, 1], dtype: 'float64' }])), 'nodes[2].op.props.steps[0].args: exp takes 1 argument(s), got 2');
  await refused(t, variant(composite([{ op: 'add', args: [0, 1], dtype: 'float32' }])), 'nodes[2].op.props.steps[0].dtype: add of (float64, float64) gives float64, the step says float32');
  await refused(t, variant(composite([{ op: 'and', args: [0, 1], dtype: 'float64' }])), 'nodes[2].op.props.steps[0].args: and: input 0 has dtype float64; and takes bool or integer inputs');
  await refused(t, variant(composite([])), 'nodes[2].op.props.steps: expected at least one step');
  await refused(t, variant((d) => { d.nodes[2].op.props.scalarOp = { cast: 'float16' }; }), `nodes[2].op.props.scalarOp.cast: expected one of ${DTYPE_LIST}, got "float16"`);
  await refused(t, variant((d) => { d.nodes[2].op.props.scalarOp = 'constructor'; }), 'nodes[2].op.props.scalarOp: unknown scalar op "constructor"; expected a name from weft\'s catalog (add, mul, exp, ...)');
  await refused(t, variant((d) => { d.nodes[0].op = { type: 'AsOp', props: {} }; }), 'nodes[0].op.props: an asOp wraps a JS function, which documents never carry; it cannot be read');
  await refused(t, variant((d) => { d.nodes[3].op.props.kind = 'eval'; }), 'nodes[3].op.props.kind: expected one of "sum", "prod", "max", "min", "all", "any", got "eval"');
});

t.test('documents that pass the checks but not the ops: refused while rebuilding', async (t) => {
  const fails = (text: string, message: string) => throwsExactly(t, () => weft.deserialize(text), weft.DeserializeError, message);
  await fails(
    variant((d) => { d.variables[6].type.dtype = 'float32'; }),
    'variables[6].type: output 0 of Sum{axis=[0]} has type TensorType(float64, (?,)) on these inputs, the document says TensorType(float32, (?,))',
  );
  await fails(
    variant((d) => { d.nodes[2].op.props.scalarOp = 'exp'; }),
    'nodes[2]: Elemwise{exp} does not accept the inputs the document gives it: Elemwise{exp}: expected 1 input, got 2',
  );
  await fails(
    variant((d) => { d.nodes[2].op.props.inplace = [[0, 5]]; }),
    'nodes[2]: Elemwise{add,inplace} does not accept the inputs the document gives it: the inplace pattern names input 5, the node has 2',
  );
  await fails(
    variant((d) => { d.variables[0].type.shape = [null, null, null]; }),
    'nodes[0]: Dot does not accept the inputs the document gives it: Dot: input 0 x (TensorType(float64, (?, ?, ?))) must be a vector or a matrix; use dot() or tensordot() for other ranks',
  );
  await fails(
    variant((d) => { d.nodes[1].op.props.newOrder = [0, 'x']; }),
    'nodes[1].op.props: cannot rebuild a DimShuffle op from these props: DimShuffle: 0 is not an axis of a 0-d input (use \'x\')',
  );
});

t.test('function documents', async (t) => {
  const y = pt.vector('y');
  const s = weft.shared([1, 2, 3], { name: 's' });
  const fn = await weft.compile([y], y.sum(), { updates: [[s, s.add(y)]], name: 'acc', workers: 0 });
  const FN: Doc = JSON.parse(weft.serialize(fn));
  const fvariant = (change: (d: Doc) => void): string => {
    const d = structuredClone(FN);
    change(d);
    return JSON.stringify(d);
  };
  t.equal(weft.deserialize(JSON.stringify(FN)).kind, 'function');
  await refused(t, fvariant((d) => { d.updates[0].shared = 4; }), 'updates[0].shared: expected an integer from 0 to 0, got 4');
  await refused(t, fvariant((d) => { d.updates.push(d.updates[0]); }), 'updates[1].shared: shared variable 0 is updated twice');
  const scalarId = FN.variables.findIndex((v: Doc) => v.kind === 'output' && v.type.shape.length === 0);
  await refused(
    t,
    fvariant((d) => { d.updates[0].value = scalarId; }),
    `updates[0].value: variable ${scalarId} has type TensorType(float64, ()), but shared variable 0 has type TensorType(float64, (?,))`,
  );
  await refused(t, fvariant((d) => { d.inputOptions = []; }), 'inputOptions: expected one entry per input (1), got 0');
  await refused(t, fvariant((d) => { d.inputOptions[0].mutable = 'yes'; }), 'inputOptions[0].mutable: expected true or false, got "yes"');
  await refused(t, fvariant((d) => { delete d.updates; }), 'document: missing field "updates"');
});

t.test('Object.prototype and Array.prototype are untouched', async (t) => {
  t.same(Object.getOwnPropertyNames(Object.prototype).sort(), protoBefore);
  t.same(Object.getOwnPropertyNames(Array.prototype).sort(), arrayProtoBefore);
  t.equal(({} as Record<string, unknown>).polluted, undefined);
  t.equal(Object.prototype.toString.call({}), '[object Object]');
});

t.teardown(() => weft.shutdown());
