// serialize/deserialize of graphs with random draws: generator states come back with their
// RandomStateType, stored value and default update (a draw's next state in the main graph, in an
// OpFromGraph's inner graph, computed after the outputs, or over the inputs a compiled function
// was compiled from), so that original and copy draw the same numbers call by call; states
// without a default update stay without; hostile type markers and default-update references are
// refused before anything is built.
import t, { type Test } from 'tap';
import { randomCodecNames } from '../../src/tensor/serialize/codecs.js';
import { pt, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Shared = weft.pt.TensorSharedVariable;
type Fn = weft.CompiledFunction;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

const stateOf = (draws: TV): Shared => draws.owner!.inputs[0] as Shared;
const list = (a: weft.NdArray | weft.NdArray[]): number[] => (Array.isArray(a) ? a : [a]).flatMap((x) => [weft.tolist(x)].flat(8) as number[]);

/** Op types read in the documents of this file. */
const seen = new Set<string>();

function record(json: string): void {
  const doc = JSON.parse(json) as Doc;
  for (const g of [doc, ...doc.graphs]) for (const n of g.nodes) seen.add(n.op.type);
}

function loadGraph(json: string): weft.DeserializedGraph {
  record(json);
  const copy = weft.deserialize(json);
  if (copy.kind !== 'variables') throw new Error('expected a variables document');
  return copy;
}

function loadFunction(json: string): weft.DeserializedFunction {
  record(json);
  const copy = weft.deserialize(json);
  if (copy.kind !== 'function') throw new Error('expected a function document');
  return copy;
}

/** Calls a compiled function of any arity with `args`. */
const callAny = (f: Fn, args: readonly unknown[]): Promise<weft.NdArray | weft.NdArray[]> =>
  (f as unknown as (...a: unknown[]) => Promise<weft.NdArray | weft.NdArray[]>)(...args);

/** Calls every function `n` times: all give the first one's values at each call, and the values change from call to call. */
async function sameDraws(t: Test, fns: readonly Fn[], args: readonly unknown[], what: string, n = 4): Promise<void> {
  const calls: number[][] = [];
  for (let i = 0; i < n; i++) {
    const values: number[][] = [];
    for (const f of fns) values.push(list(await callAny(f, args)));
    values.slice(1).forEach((v, k) => t.same(v, values[0], `${what}: call ${i}: copy ${k + 1} draws what the original draws`));
    calls.push(values[0]!);
  }
  for (let i = 1; i < n; i++) t.notSame(calls[i], calls[i - 1], `${what}: call ${i} draws anew`);
}

/** The id of output `index` of node `node` in a graph of a document. */
const outputId = (g: Doc, node: number, index: number): number =>
  g.variables.findIndex((v: Doc) => v.kind === 'output' && v.node === node && v.index === index);

t.test('a draw in the graph: its state comes back with its type, stored value and default update', async (t) => {
  const x = pt.vector('x');
  const u = new weft.RandomStream(42).uniform([3]);
  const y = x.add(u);
  const state = stateOf(u);
  const stored = list(state.getValue());
  const json = weft.serialize([y]);
  const doc = JSON.parse(json) as Doc;
  t.same(doc.shared[0].type, { dtype: 'uint32', shape: [null], kind: 'randomState' }, 'the state type is marked');
  t.same(doc.shared[0].defaultUpdate, { variable: outputId(doc, 0, 0) }, "the default update is the draw's next state");
  const copy = loadGraph(json);
  const s = copy.shared[0]!;
  t.ok(s.type instanceof weft.RandomStateType, 'the state is of RandomStateType');
  t.ok(s.type.equals(state.type));
  t.same(list(s.getValue()), stored, 'the stored state');
  const draw = copy.outputs[0]!.owner!.inputs[1]!.owner!;
  t.ok(draw.op instanceof weft.UniformRV);
  t.equal(s.defaultUpdate, draw.outputs[0], "the default update is the loaded draw's next state");
  t.equal(weft.serialize(copy.outputs), json, 'the copy writes the same document');
  const f = await weft.compile([x], y);
  const g = await weft.compile(copy.inputs, copy.outputs[0]!);
  await sameDraws(t, [f, g], [[1, 2, 3]], 'x + uniform');
  t.notSame(list(s.getValue()), stored, 'the loaded state advanced');
  t.same(list(s.getValue()), list(state.getValue()), 'as far as the original');
});

t.test('states without a default update stay without; a default update outside the outputs is written after them', async (t) => {
  // A plain uint32 vector as a state, without a default update: the same draws every call.
  const plain = weft.shared(new Uint32Array([1, 2, 3, 4]), { name: 'plain' });
  const [, d] = new weft.UniformRV('float64', 1).call(plain, 3, 0, 1) as TV[];
  const json = weft.serialize([d!]);
  t.notOk('kind' in (JSON.parse(json) as Doc).shared[0].type, 'no marker on a plain uint32 vector');
  const copy = loadGraph(json);
  const s = copy.shared[0]!;
  t.notOk(s.type instanceof weft.RandomStateType, 'a plain uint32 vector');
  t.equal(s.defaultUpdate, undefined, 'no default update');
  const g = await weft.compile([], copy.outputs[0]!);
  const first = list(await g());
  t.same(list(await g()), first, 'without a default update the state stays');
  t.same(list(await (await weft.compile([], d!))()), first, 'the draws of the original');

  // A default update that the outputs do not compute: the state skips 5 draws per call.
  const stream = new weft.RandomStream(9);
  const u = stream.uniform([3]);
  const state = stateOf(u);
  const [skip] = new weft.UniformRV('float64', 1).call(state, 5, 0, 1) as TV[];
  state.defaultUpdate = skip;
  const json2 = weft.serialize([u]);
  const doc = JSON.parse(json2) as Doc;
  t.equal(doc.nodes.length, 2, 'the draw of the outputs, then the one of the default update');
  t.same(doc.outputs, [outputId(doc, 0, 1)]);
  t.same(doc.shared[0].defaultUpdate, { variable: outputId(doc, 1, 0) });
  const copy2 = loadGraph(json2);
  const skipped = copy2.shared[0]!.defaultUpdate!;
  t.equal(skipped.owner!.inputs[1]!.toString(), 'TensorConstant{5}', 'the default update draws 5');
  t.not(skipped.owner, copy2.outputs[0]!.owner, 'in its own node');
  t.equal(weft.serialize(copy2.outputs), json2, 'the copy writes the same document');
  await sameDraws(t, [await weft.compile([], u), await weft.compile([], copy2.outputs[0]!)], [], 'uniform, skipping 5');

  // A default update that reads a variable the document does not have is refused.
  const z = pt.vector('z');
  const [zSkip] = new weft.UniformRV('float64', 1).call(state, pt.shape(z).get(0), 0, 1) as TV[];
  state.defaultUpdate = zSkip;
  await throwsExactly(t, () => weft.serialize([u]), TypeError,
    'serialize: the default update of shared variable rng needs z (TensorType(float64, (?,))), which is neither an input of the graph, a constant nor a shared variable');
});

t.test('a compiled function: its draws, and default updates over the inputs it was compiled from', async (t) => {
  const stream = new weft.RandomStream(7);
  const x = pt.vector('x');
  const n = stream.normal(pt.shape(x), { mean: 1 });
  const k = stream.integers([3], 0, 10);
  const y = x.mul(n).add(k.astype('float64').sum());
  const f = await weft.compile([x], y, { name: 'noisy' });
  const json = weft.serialize(f);
  const doc = loadFunction(json);
  t.equal(doc.name, 'noisy');
  t.equal(doc.shared.length, 2, 'two states');
  t.ok(doc.shared.every((s) => s.type instanceof weft.RandomStateType), 'both of RandomStateType');
  t.same(doc.updates.map(([s]) => s), doc.shared, 'updated by the function');
  // The default updates are the user's draws again, over the loaded input: they can be compiled.
  const [sn, sk] = doc.shared;
  const [nDraw, kDraw] = [sn!.defaultUpdate!.owner!, sk!.defaultUpdate!.owner!];
  t.ok(nDraw.op instanceof weft.NormalRV && kDraw.op instanceof weft.IntegersRV);
  t.same(weft.graphInputs([sn!.defaultUpdate!]).filter((v) => !(v instanceof weft.Constant)), [sn, doc.inputs[0]], 'the normal draw reads the state and the shape of the input');
  const h = await weft.compile(doc.inputs, doc.outputs, { updates: doc.updates });
  // A second copy, compiled without its updates: the restored default updates advance it.
  const doc2 = loadFunction(json);
  const g = await weft.compile(doc2.inputs, doc2.outputs[0]! as TV);
  t.same(g.updated, doc2.shared, 'the default updates are used');
  await sameDraws(t, [f, h, g], [[1, -2, 0.5]], 'function');
  t.equal(weft.serialize(doc.outputs), weft.serialize(doc.outputs), 'a loaded function graph serializes');
});

t.test('OpFromGraph with a draw inside: the default update is found in its inner graph', async (t) => {
  const stream = new weft.RandomStream(11);
  const x = pt.vector('x');
  const noise = stream.normal(pt.shape(x));
  const op = new weft.OpFromGraph([x], [x.add(noise)], { name: 'noisy' });
  const y = (op.call(x) as TV).mul(2);
  const json = weft.serialize([y]);
  const doc = JSON.parse(json) as Doc;
  t.equal(doc.graphs.length, 1);
  const drawNode = doc.graphs[0].nodes.findIndex((nd: Doc) => nd.op.type === 'NormalRV');
  t.same(doc.shared[0].defaultUpdate, { graph: 0, variable: outputId(doc.graphs[0], drawNode, 0) }, "the draw's next state in the op's graph");
  const copy = loadGraph(json);
  const s = copy.shared[0]!;
  t.ok(s.type instanceof weft.RandomStateType);
  const node = copy.outputs[0]!.owner!.inputs.map((v) => v.owner).find((a) => a?.op instanceof weft.OpFromGraph)!;
  const loaded = node.op as weft.OpFromGraph;
  t.same(loaded.updatedShared, [s], 'the loaded op updates the loaded state');
  t.equal(loaded.inner.toposort().filter((a) => a.op instanceof weft.NormalRV).length, 1, 'one draw gives the output and the hidden next state');
  t.equal(loaded.structure.replace(/\bs\d+/g, 's'), op.structure.replace(/\bs\d+/g, 's'), 'the structure of the original, but for the state');
  t.equal(weft.serialize(copy.outputs), json, 'the copy writes the same document');
  const f = await weft.compile([x], y);
  const g = await weft.compile(copy.inputs, copy.outputs[0]!);
  await sameDraws(t, [f, g], [[1, 2, 3, 4]], 'OpFromGraph');

  // A compiled function with the op.
  const fn = await weft.compile([x], y);
  const fdoc = loadFunction(weft.serialize(fn));
  t.equal(fdoc.shared[0]!.defaultUpdate!.owner!.op instanceof weft.NormalRV, true);
  const h = await weft.compile(fdoc.inputs, fdoc.outputs, { updates: fdoc.updates });
  const fdoc2 = loadFunction(weft.serialize(fn));
  const k = await weft.compile(fdoc2.inputs, fdoc2.outputs[0]! as TV);
  t.same(k.updated, fdoc2.shared, 'compiled again, the loaded op updates its state');
  await sameDraws(t, [fn, h, k], [[0.5, -1]], 'function with OpFromGraph');
});

// ---------------------------------------------------------------------------------------------
// Hostile documents

const hx = pt.vector('x');
const BASE: Doc = JSON.parse(weft.serialize([hx.add(new weft.RandomStream(5).uniform([3]))]));
/** variables: 0 x, 1 state, 2-4 constants, 5 next state, 6 draws, 7 sum. */
const NEXT = outputId(BASE, 0, 0);
const DRAWS = outputId(BASE, 0, 1);
const stream = new weft.RandomStream(6);
const ox = pt.vector('x');
const OFG: Doc = JSON.parse(weft.serialize([new weft.OpFromGraph([ox], [ox.add(stream.uniform([2]))]).call(ox) as TV]));

function variant(base: Doc, change: (d: Doc) => Doc | void): string {
  const d = structuredClone(base);
  return JSON.stringify(change(d) ?? d);
}

/** The id the next variable will get: unchanged by a load that fails its checks. */
const nextVariableId = (): number => pt.scalar().id + 1;

async function refused(t: Test, text: string, message: string): Promise<void> {
  const before = nextVariableId();
  await throwsExactly(t, () => weft.deserialize(text), weft.DeserializeError, message, message);
  t.equal(nextVariableId(), before + 1, `${message}: no variable was built`);
}

t.test('hostile: the random state marker', async (t) => {
  t.equal(NEXT, 5);
  t.equal(DRAWS, 6);
  const marked = (change: (type: Doc) => void) => variant(BASE, (d) => change(d.shared[0].type));
  for (const kind of ['randomState2', '__proto__', 'constructor', 'RandomStateType', '']) {
    await refused(t, marked((ty) => { ty.kind = kind; }), `shared[0].type.kind: expected one of "randomState", got ${JSON.stringify(kind)}`);
  }
  await refused(t, marked((ty) => { ty.kind = null; }), 'shared[0].type.kind: expected one of "randomState", got null');
  await refused(t, marked((ty) => { ty.kind = { name: 'randomState' }; }), 'shared[0].type.kind: expected one of "randomState", got an object');
  await refused(t, marked((ty) => { ty.kind = ['randomState']; }), 'shared[0].type.kind: expected one of "randomState", got an array of 1');
  await refused(t, marked((ty) => { ty.dtype = 'float64'; }),
    'shared[0].type: a random state type is a uint32 vector of unknown length (shape [null]), got float64 of shape [null]');
  await refused(t, marked((ty) => { ty.shape = [4]; }),
    'shared[0].type: a random state type is a uint32 vector of unknown length (shape [null]), got uint32 of shape [4]');
  await refused(t, marked((ty) => { ty.shape = [null, null]; }),
    'shared[0].type: a random state type is a uint32 vector of unknown length (shape [null]), got uint32 of shape [null, null]');
  await refused(t, marked((ty) => { ty.rng = 'mt19937'; }), 'shared[0].type: unexpected field "rng"; expected only dtype, shape, kind');
  await refused(t, variant(BASE, (d) => { d.variables[NEXT].type.kind = 'randomStat'; }),
    `variables[${NEXT}].type.kind: expected one of "randomState", got "randomStat"`);
  // The marker on a variable that is not a state: the draws.
  await refused(t, variant(BASE, (d) => { d.variables[DRAWS].type.kind = 'randomState'; }),
    `variables[${DRAWS}].type: a random state type is a uint32 vector of unknown length (shape [null]), got float64 of shape [3]`);
  // State values: four words (any four: a Philox key and position).
  t.same(Array.from((weft.deserialize(variant(BASE, (d) => { d.shared[0].value.data = [0, 0, 0, 0]; })) as weft.DeserializedGraph).shared[0]!.getValue().data), [0, 0, 0, 0], 'an all-zero state loads');
  await refused(t, variant(BASE, (d) => { d.shared[0].value = { dtype: 'uint32', shape: [3], data: [1, 2, 3] }; }),
    "shared[0].value: a random state holds 4 uint32 words (Philox's key and the stream's position), got 3");
  await refused(t, variant(BASE, (d) => { d.shared[0].value.data[0] = -1; }),
    'shared[0].value.data[0]: expected an integer from 0 to 4294967295 (uint32), got -1');
  // Markers that pass the checks but not the ops: refused while rebuilding.
  await throwsExactly(t, () => weft.deserialize(variant(BASE, (d) => { delete d.shared[0].type.kind; delete d.shared[0].defaultUpdate; })), weft.DeserializeError,
    `variables[${NEXT}].type: output 0 of UniformRV{dtype=float64, ndim=1} has type TensorType(uint32, (?,)) on these inputs, the document says RandomStateType`);
  // Without markers and default updates (documents written before them): plain uint32 states.
  const old = weft.deserialize(variant(BASE, (d) => {
    delete d.shared[0].type.kind;
    delete d.shared[0].defaultUpdate;
    delete d.variables[NEXT].type.kind;
  }));
  t.notOk(old.shared[0]!.type instanceof weft.RandomStateType, 'an unmarked state is a plain uint32 vector');
  t.equal(old.shared[0]!.defaultUpdate, undefined, 'without a default update');
});

t.test('hostile: default update references', async (t) => {
  const at = (ref: unknown) => variant(BASE, (d) => { d.shared[0].defaultUpdate = ref; });
  const last = BASE.variables.length - 1;
  await refused(t, at({ variable: 99 }), `shared[0].defaultUpdate.variable: expected an integer from 0 to ${last}, got 99`);
  await refused(t, at({ variable: -1 }), `shared[0].defaultUpdate.variable: expected an integer from 0 to ${last}, got -1`);
  await refused(t, at({ variable: 1.5 }), 'shared[0].defaultUpdate.variable: expected an integer, got 1.5');
  await refused(t, at({ variable: '5' }), 'shared[0].defaultUpdate.variable: expected an integer, got "5"');
  await refused(t, at({}), 'shared[0].defaultUpdate: missing field "variable"');
  await refused(t, at(5), 'shared[0].defaultUpdate: expected an object, got 5');
  await refused(t, at(null), 'shared[0].defaultUpdate: expected an object, got null');
  await refused(t, at([NEXT]), 'shared[0].defaultUpdate: expected an object, got an array of 1');
  await refused(t, at({ variable: NEXT, node: 0 }), 'shared[0].defaultUpdate: unexpected field "node"; expected only graph, variable');
  await refused(
    t,
    JSON.stringify(BASE).replace(`"defaultUpdate":{"variable":${NEXT}}`, `"defaultUpdate":{"__proto__":{"polluted":true},"variable":${NEXT}}`),
    'shared[0].defaultUpdate: unexpected field "__proto__"; expected only graph, variable',
  );
  await refused(t, at({ graph: 0, variable: NEXT }), 'shared[0].defaultUpdate.graph: refers to an inner graph, but the document\'s "graphs" is empty');
  await refused(t, at({ variable: DRAWS }),
    `shared[0].defaultUpdate.variable: variable ${DRAWS} has type TensorType(float64, (3,)), but shared variable 0 has type RandomStateType`);
  await refused(t, at({ variable: 0 }),
    'shared[0].defaultUpdate.variable: variable 0 has type TensorType(float64, (?,)), but shared variable 0 has type RandomStateType');
  // In a document with an inner graph.
  const ref = OFG.shared[0].defaultUpdate;
  t.equal(ref.graph, 0);
  const inner = (change: Doc) => variant(OFG, (d) => { d.shared[0].defaultUpdate = change; });
  await refused(t, inner({ graph: 1, variable: ref.variable }), 'shared[0].defaultUpdate.graph: expected an integer from 0 to 0, got 1');
  await refused(t, inner({ graph: -1, variable: ref.variable }), 'shared[0].defaultUpdate.graph: expected an integer from 0 to 0, got -1');
  await refused(t, inner({ graph: null, variable: ref.variable }), 'shared[0].defaultUpdate.graph: expected an integer, got null');
  await refused(t, inner({ graph: 0, variable: OFG.graphs[0].variables.length }),
    `shared[0].defaultUpdate.variable: expected an integer from 0 to ${OFG.graphs[0].variables.length - 1}, got ${OFG.graphs[0].variables.length}`);
  const innerDraws = outputId(OFG.graphs[0], 0, 1);
  await refused(t, inner({ graph: 0, variable: innerDraws }),
    `shared[0].defaultUpdate.variable: variable ${innerDraws} has type TensorType(float64, (2,)), but shared variable 0 has type RandomStateType`);
  // A reference that is well formed loads: the state itself (a default update that keeps it).
  const keep = weft.deserialize(at({ variable: 1 }));
  t.equal(keep.shared[0]!.defaultUpdate, keep.shared[0], 'a state may be its own default update');
});

t.test('every distribution round-trips and draws the same numbers', async (t) => {
  const stream = new weft.RandomStream(7);
  const draws = [
    stream.standardNormal({ size: [3] }), stream.bernoulli(0.4, { size: [3] }), stream.binomial(10, 0.3, { size: [3] }), stream.poisson(3, { size: [3] }),
    stream.geometric(0.5, { size: [3] }), stream.gamma(2, 1.5, { size: [3] }), stream.beta(2, 3, { size: [3] }), stream.exponential(2, { size: [3] }),
    stream.lognormal(0, 0.5, { size: [3] }), stream.laplace(0, 1, { size: [3] }), stream.logistic(0, 1, { size: [3] }), stream.halfNormal(0, 1, { size: [3] }),
    stream.cauchy(0, 1, { size: [3] }), stream.studentT(4, 0, 1, { size: [3] }),
    stream.categorical(pt.constant([0.2, 0.8]), { size: [3] }), stream.multinomial(4, pt.constant([0.5, 0.25, 0.25])).sum(), stream.dirichlet(pt.constant([1, 2, 3])).sum(),
    stream.multivariateNormal(pt.constant([0, 1, 2]), pt.eye(3)), stream.choice(9, { size: [3], replace: false }), stream.permutation(3),
  ];
  const y = draws.map((d) => d.astype('float64')).reduce((a, b) => a.add(b));
  const original = await weft.compile([], y);
  const copy = loadGraph(weft.serialize([y]));
  await sameDraws(t, [original, await weft.compile([], copy.outputs[0]!)], [], 'all distributions');
});

t.test('every random variable codec was read in a round trip above', async (t) => {
  t.same(randomCodecNames(), ['UniformRV', 'NormalRV', 'IntegersRV', 'StandardNormalRV', 'BernoulliRV', 'BinomialRV', 'PoissonRV', 'GeometricRV', 'GammaRV', 'BetaRV', 'ExponentialRV', 'LognormalRV', 'LaplaceRV', 'LogisticRV', 'HalfNormalRV', 'CauchyRV', 'StudentTRV', 'CategoricalRV', 'MultinomialRV', 'DirichletRV', 'MultivariateNormalRV', 'ChoiceRV', 'PermutationRV']);
  t.same(randomCodecNames().filter((name) => !seen.has(name)), [], 'codecs not read');
});

t.teardown(() => weft.shutdown());
