// The hand-written op codecs: tensor ops that hold a scalar program or a graph (Elemwise,
// Composite, Map, OpFromGraph, Scan) or a closure (asOp, refused). The other ops are written as
// their props by the codec derived from them (graph/prop-codec.ts), registered in their own files.
// Scalar ops are named (catalog names, casts, composites of named steps): a document selects
// code only by naming it, never carries any. (Random states' types and default updates are the
// document's: tensor/serialize/value-codec.ts, graph/serialize.ts.)
import type { Apply } from '../../graph/apply.js';
import { FunctionGraph } from '../../graph/fgraph.js';
import type { JsonObject, JsonReader, Json } from '../../graph/json-reader.js';
import { registerOpCodec, registeredOpCodecs, type GraphRef, type OpBuildContext, type OpCodec, type OpDecoder, type OpEncoder, type OpPlan } from '../../graph/op-codecs.js';
import { SharedVariable } from '../../graph/shared.js';
import type { Variable } from '../../graph/variable.js';
import { DTYPES, isDtype, type Dtype } from '../../kernels/dtype.js';
import { AsOp } from '../inner/as-op.js';
import { Composite, CompositeScalar, type CompositeStep } from '../elemwise/composite.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { MapOp } from '../inner/map.js';
import { TensorOp } from '../core/op.js';
import { OpFromGraph } from '../inner/op-from-graph.js';
import { TracedOverride, type OverrideSlot } from '../inner/op-from-graph-overrides.js';
import { RandomVariable } from '../random/random.js';
import { ScanOp, type ScanSpec } from '../inner/scan-op.js';
import * as catalog from '../scalar/catalog.js';
import { ScalarOp } from '../scalar/scalar-op.js';
import { TensorType } from '../core/type.js';
import { isTensorVariable, type TensorVariable } from '../core/variable.js';
import { MAX_AXES } from '../core/prop-kinds.js';

/** Fused computations larger than this are refused (fusion itself stops at 256 steps). */
const MAX_COMPOSITE_STEPS = 4096;
const MAX_COMPOSITE_INPUTS = 1024;
/** Composites nested as steps of composites, deeper than this, are refused. */
const MAX_SCALAR_NESTING = 4;

// ---------------------------------------------------------------------------------------------
// Scalar ops by name

let catalogByName: Map<string, ScalarOp> | undefined;

/** The catalog's scalar ops by name, and the users' registered ones (casts are written `{ cast: dtype }`). */
function catalogOps(): Map<string, ScalarOp> {
  if (!catalogByName) {
    const m = new Map<string, ScalarOp>();
    for (const v of Object.values(catalog)) if (v instanceof ScalarOp && !(v instanceof CompositeScalar)) m.set(v.name, v);
    catalogByName = m;
  }
  return catalogByName;
}

/**
 * Lets documents name a user's scalar op (in Elemwise and Composite nodes) by its name; the
 * reading process registers it too. A document never carries the op's code, only its name.
 */
export function registerScalarOp(op: ScalarOp): void {
  if (!(op instanceof ScalarOp) || op instanceof CompositeScalar) throw new TypeError(`registerScalarOp: expected a weft.ScalarOp, got ${String(op)}`);
  const known = catalogOps().get(op.name);
  if (known === op) return;
  if (known) throw new TypeError(`registerScalarOp: a scalar op named "${op.name}" is already known (weft's catalog or an earlier registration)`);
  catalogOps().set(op.name, op);
}

function encodeScalar(op: ScalarOp, depth = 0): Json {
  if (op instanceof CompositeScalar) {
    if (depth >= MAX_SCALAR_NESTING) throw new TypeError(`serialize: composites nested more than ${MAX_SCALAR_NESTING} deep`);
    return { composite: encodeComposite(op, depth + 1) };
  }
  if (catalogOps().get(op.name) === op) return op.name;
  const cast = /^cast\{(\w+)\}$/.exec(op.name);
  if (cast && isDtype(cast[1]) && catalog.castTo(cast[1]) === op) return { cast: cast[1] };
  throw new TypeError(`serialize: the scalar op ${op} is not one of weft's catalog, so a document cannot name it (register it with weft.registerScalarOp)`);
}

function encodeComposite(c: CompositeScalar, depth: number): JsonObject {
  return {
    inputDtypes: [...c.inputDtypes],
    steps: c.steps.map((s) => ({ op: encodeScalar(s.op, depth), args: [...s.args], dtype: s.dtype })),
  };
}

/** A checked scalar op: enough to check the steps that use it, and to build it. */
interface ScalarPlan {
  readonly label: string;
  readonly nin: number | 'variadic';
  checkInputs(dtypes: readonly Dtype[]): string | undefined;
  outputDtype(dtypes: readonly Dtype[]): Dtype;
  build(): ScalarOp;
}

function catalogPlan(op: ScalarOp): ScalarPlan {
  const spec = op.spec;
  return {
    label: op.name,
    nin: spec.nin,
    checkInputs: (d) => spec.checkInputs?.(d),
    outputDtype: (d) => spec.outputDtype(d),
    build: () => op,
  };
}

function readScalar(r: JsonReader, depth = 0): ScalarPlan {
  if (typeof r.value === 'string') {
    const op = catalogOps().get(r.value);
    if (!op) r.error(`unknown scalar op ${JSON.stringify(r.value)}; expected a name from weft's catalog (add, mul, exp, ...)`);
    return catalogPlan(op);
  }
  if (r.has('cast')) {
    r.object(['cast']);
    return catalogPlan(catalog.castTo(r.field('cast').oneOf(DTYPES)));
  }
  if (r.has('composite')) {
    r.object(['composite']);
    if (depth >= MAX_SCALAR_NESTING) r.error(`composites nested more than ${MAX_SCALAR_NESTING} deep`);
    return compositePlan(r.field('composite'), depth + 1);
  }
  return r.fail('a scalar op: a catalog name, { "cast": dtype } or { "composite": ... }');
}

/** Checks a fused computation step by step, as CompositeScalar would, with paths to the faults. */
function compositePlan(r: JsonReader, depth: number, fields: readonly string[] = ['inputDtypes', 'steps']): ScalarPlan {
  r.object(fields);
  const inputDtypes = r.field('inputDtypes').array(MAX_COMPOSITE_INPUTS).map((d) => d.oneOf(DTYPES));
  const stepsReader = r.field('steps');
  const stepReaders = stepsReader.array(MAX_COMPOSITE_STEPS);
  if (stepReaders.length === 0) stepsReader.error('expected at least one step');
  const dtypes: Dtype[] = [...inputDtypes];
  const steps = stepReaders.map((sr) => {
    sr.object(['op', 'args', 'dtype']);
    const op = readScalar(sr.field('op'), depth);
    const argsReader = sr.field('args');
    const args = argsReader.array(MAX_COMPOSITE_INPUTS).map((a) => a.int(0, dtypes.length - 1));
    if (op.nin === 'variadic' ? args.length < 1 : args.length !== op.nin) {
      argsReader.error(`${op.label} takes ${op.nin === 'variadic' ? 'at least 1 argument' : `${op.nin} argument(s)`}, got ${args.length}`);
    }
    const argDtypes = args.map((a) => dtypes[a]!);
    const problem = op.checkInputs(argDtypes);
    if (problem) argsReader.error(`${op.label}: ${problem}`);
    const dtypeReader = sr.field('dtype');
    const dtype = dtypeReader.oneOf(DTYPES);
    const want = op.outputDtype(argDtypes);
    if (dtype !== want) dtypeReader.error(`${op.label} of (${argDtypes.join(', ')}) gives ${want}, the step says ${dtype}`);
    dtypes.push(dtype);
    return { op, args, dtype };
  });
  const out = dtypes[dtypes.length - 1]!;
  return {
    label: 'composite',
    nin: inputDtypes.length,
    checkInputs: (ins) => {
      const i = ins.findIndex((d, k) => d !== inputDtypes[k]);
      return i < 0 ? undefined : `input ${i} has dtype ${ins[i]}, the fused computation expects ${inputDtypes[i]}`;
    },
    outputDtype: () => out,
    build: () => new CompositeScalar(inputDtypes, steps.map((s): CompositeStep => ({ op: s.op.build(), args: s.args, dtype: s.dtype }))),
  };
}

// ---------------------------------------------------------------------------------------------
// Inplace patterns

function inplacePairs(pattern: Readonly<Record<number, number>>): Json[] {
  return Object.entries(pattern).map(([o, i]) => [Number(o), i]);
}

function readInplace(r: JsonReader): Record<number, number> {
  const pattern: Record<number, number> = {};
  r.array(MAX_AXES).forEach((pr) => {
    const pair = pr.array(2);
    if (pair.length !== 2) pr.fail('a pair [output index, input index]');
    const o = pair[0]!.int(0, 0);
    if (o in pattern) pair[0]!.error(`output ${o} is listed twice`);
    pattern[o] = pair[1]!.int(0, MAX_COMPOSITE_INPUTS - 1);
  });
  return pattern;
}

// ---------------------------------------------------------------------------------------------
// Codecs

type OpClass<O> = abstract new (...args: never[]) => O;

/** A codec for an op whose props are read into P and passed to a constructor. */
function codec<O extends TensorOp<TensorVariable | TensorVariable[]>, P>(
  name: string,
  opClass: OpClass<O>,
  props: readonly string[],
  encode: (op: O, enc: OpEncoder) => JsonObject,
  decode: (r: JsonReader, dec: OpDecoder) => P,
  build: (p: P, ctx: OpBuildContext) => O,
  apply?: (op: O, inputs: readonly Variable[]) => Apply,
): OpCodec<O, P> {
  return { name, opClass, props, encode, decode, build, ...(apply ? { apply } : {}) };
}

interface ElemwiseParams {
  readonly scalar: ScalarPlan;
  readonly inplace: Record<number, number>;
}

/** Checks that an inplace pattern names inputs the node has, then makes the node. */
function applyInplace(op: Elemwise, inputs: readonly Variable[]): Apply {
  for (const i of Object.values(op.inplacePattern)) {
    if (i >= inputs.length) throw new RangeError(`the inplace pattern names input ${i}, the node has ${inputs.length}`);
  }
  return op.makeNode(...inputs);
}

interface OpFromGraphParams {
  readonly graph: GraphRef;
  readonly inline: boolean;
  readonly name: string | undefined;
  readonly connectionPattern: boolean[][] | undefined;
  readonly lopOverrides: OverridePlan | undefined;
  readonly ropOverrides: OverridePlan | undefined;
}

/** An override as read: an OpFromGraph given as such, or a traced one (its op, if any, and slots). */
type OverridePlan = { readonly given: OpPlan } | { readonly traced: OpPlan | undefined; readonly slots: OverrideSlot[] };

/**
 * An override: an OpFromGraph the user gave is written as that op; a function or a list was
 * traced at construction, and is written as the traced op and its slots (never as code).
 */
function encodeOverride(o: TracedOverride | undefined, enc: OpEncoder): Json {
  if (o === undefined) return null;
  if (o.given && o.op) return enc.op(o.op);
  return { op: o.op ? enc.op(o.op) : null, slots: o.slots.map((s) => (typeof s === 'object' ? { undefined: s.undefined } : s)) };
}

function readOverrideOp(r: JsonReader, dec: OpDecoder): OpPlan {
  const plan = dec.op(r);
  if (plan.type !== 'OpFromGraph') r.field('type').fail('"OpFromGraph" (overrides are OpFromGraph ops)');
  return plan;
}

function readOverride(r: JsonReader, dec: OpDecoder): OverridePlan | undefined {
  if (r.value === null) return undefined;
  if (!r.has('slots')) return { given: readOverrideOp(r, dec) };
  r.object(['op', 'slots']);
  const op = r.field('op');
  return { traced: op.value === null ? undefined : readOverrideOp(op, dec), slots: r.field('slots').array(65536).map(readSlot) };
}

function readSlot(r: JsonReader): OverrideSlot {
  if (typeof r.value === 'number') return r.int(0, 65535);
  if (typeof r.value === 'string') return r.oneOf(['default', 'disconnected'] as const);
  if (!r.has('undefined')) r.fail('an output index, "default", "disconnected" or { "undefined": reason }');
  return { undefined: r.object(['undefined']).field('undefined').string() };
}

function buildOverride(p: OverridePlan | undefined, ctx: OpBuildContext): OpFromGraph | TracedOverride | undefined {
  if (p === undefined) return undefined;
  if ('given' in p) return ctx.op(p.given) as OpFromGraph;
  return new TracedOverride(p.traced ? (ctx.op(p.traced) as OpFromGraph) : undefined, p.slots);
}

function buildOpFromGraph(p: OpFromGraphParams, ctx: OpBuildContext): OpFromGraph {
  const g = ctx.graph(p.graph);
  const nExplicit = g.inputs.findIndex((v) => v instanceof SharedVariable);
  const explicit = (nExplicit < 0 ? g.inputs : g.inputs.slice(0, nExplicit)) as TensorVariable[];
  const recordedShared = nExplicit < 0 ? [] : g.inputs.slice(nExplicit);
  if (recordedShared.some((v) => !(v instanceof SharedVariable))) {
    throw new TypeError('the inner graph lists an input after a shared variable; shared variables come last');
  }
  if (!g.outputs.every(isTensorVariable)) throw new TypeError('the inner graph has an output that is not a tensor');
  if (p.connectionPattern) {
    const rowsOk = p.connectionPattern.length === explicit.length;
    if (!rowsOk || p.connectionPattern.some((row) => row.length !== g.outputs.length)) {
      throw new TypeError(`connectionPattern must have one row per input (${explicit.length}) and one column per output (${g.outputs.length})`);
    }
  }
  const lop = buildOverride(p.lopOverrides, ctx);
  const rop = buildOverride(p.ropOverrides, ctx);
  const op = new OpFromGraph(explicit, g.outputs as TensorVariable[], {
    ...(p.inline ? { inline: true } : {}),
    ...(p.name !== undefined ? { name: p.name } : {}),
    ...(p.connectionPattern ? { connectionPattern: p.connectionPattern } : {}),
    ...(lop ? { lopOverrides: lop } : {}),
    ...(rop ? { ropOverrides: rop } : {}),
  });
  if (op.shared.length !== recordedShared.length || op.shared.some((s, i) => s !== recordedShared[i])) {
    throw new TypeError('the inner graph reads other shared variables than its inputs list');
  }
  return op;
}

interface ScanParams {
  readonly graph: GraphRef;
  readonly spec: ScanSpec;
  readonly name: string | undefined;
}

const MAX_SCAN_PARTS = 65536;

function readScan(r: JsonReader, dec: OpDecoder): ScanParams {
  const required = ['graph', 'nSeqs', 'taps', 'nNitsot', 'finals', 'nNonSeqs', 'truncateGradient', 'name'];
  r.object([...required, 'until', 'keep', 'inplace'], required);
  const count = (f: string): number => r.field(f).int(0, MAX_SCAN_PARTS);
  return {
    graph: dec.graph(r.field('graph')),
    spec: {
      nSeqs: count('nSeqs'),
      taps: r.field('taps').array(MAX_SCAN_PARTS).map((t) => t.ints(-(2 ** 31), -1, MAX_SCAN_PARTS)),
      nNitsot: count('nNitsot'),
      finals: r.field('finals').ints(0, MAX_SCAN_PARTS, MAX_SCAN_PARTS),
      nNonSeqs: count('nNonSeqs'),
      truncateGradient: r.field('truncateGradient').int(-1),
      ...(r.has('until') && r.field('until').boolean() ? { until: true } : {}),
      ...(r.has('keep') ? { keep: r.field('keep').array(MAX_SCAN_PARTS).map((k) => (k.value === null ? null : k.int(1))) } : {}),
      ...(r.has('inplace') && r.field('inplace').boolean() ? { inplace: true } : {}),
    },
    name: r.field('name').optionalString(),
  };
}

function tensorOutputs(outputs: readonly Variable[]): TensorVariable[] {
  if (!outputs.every(isTensorVariable)) throw new TypeError('the inner graph has an output that is not a tensor');
  return outputs as TensorVariable[];
}

function allCodecs(): ReadonlyArray<OpCodec<TensorOp<TensorVariable | TensorVariable[]>, never>> {
  const list = [
    codec<Elemwise, ElemwiseParams>(
      'Elemwise',
      Elemwise,
      ['scalarOp', 'inplacePattern'],
      (op) => ({ scalarOp: encodeScalar(op.scalarOp), inplace: inplacePairs(op.inplacePattern) }),
      (r) => {
        r.object(['scalarOp', 'inplace']);
        return { scalar: readScalar(r.field('scalarOp')), inplace: readInplace(r.field('inplace')) };
      },
      (p) => new Elemwise(p.scalar.build(), p.inplace),
      applyInplace,
    ),
    codec<Composite, { scalar: ScalarPlan; inplace: Record<number, number> }>(
      'Composite',
      Composite,
      ['scalarOp', 'inplacePattern'],
      (op) => ({ ...encodeComposite(op.composite, 0), inplace: inplacePairs(op.inplacePattern) }),
      (r) => {
        r.object(['inputDtypes', 'steps', 'inplace']);
        return { scalar: compositePlan(r, 0, ['inputDtypes', 'steps', 'inplace']), inplace: readInplace(r.field('inplace')) };
      },
      (p) => new Composite(p.scalar.build() as CompositeScalar, p.inplace),
      applyInplace,
    ),
    codec<MapOp, GraphRef>(
      'Map',
      MapOp,
      // `id` is each Map's own identity: a rebuilt Map gets a new one.
      ['id'],
      (op, enc) => ({ graph: enc.graph(op.inner) }),
      (r, dec) => dec.graph(r.object(['graph']).field('graph')),
      (ref, ctx) => {
        const g = ctx.graph(ref);
        const index = g.inputs[0];
        const int32Scalar = index !== undefined && isTensorVariable(index) && !(index instanceof SharedVariable) && index.type.equals(new TensorType('int32', []));
        if (!int32Scalar) throw new TypeError("the inner graph's first input must be the index, an int32 scalar");
        return new MapOp(index as TensorVariable, tensorOutputs(g.outputs), g.inputs.slice(1) as TensorVariable[]);
      },
    ),
    codec<OpFromGraph, OpFromGraphParams>(
      'OpFromGraph',
      OpFromGraph,
      ['structure', 'inline', 'overrides'],
      (op, enc) => ({
        // The graph as the user gave it: its hidden outputs are found again when it is rebuilt, from
        // the default updates of its shared variables, which may be written as these variables of it.
        graph: enc.graph(op.userGraph, op.updatedShared.map((s, k) => [s, op.innerOutputs[op.nVisible + k]!] as const)),
        inline: op.inline,
        name: op.options.name ?? null,
        connectionPattern: op.options.connectionPattern ? op.options.connectionPattern.map((row) => [...row]) : null,
        lopOverrides: encodeOverride(op.lopOverride, enc),
        ropOverrides: encodeOverride(op.ropOverride, enc),
      }),
      (r, dec) => {
        r.object(['graph', 'inline', 'name', 'connectionPattern', 'lopOverrides', 'ropOverrides']);
        const cp = r.field('connectionPattern');
        return {
          graph: dec.graph(r.field('graph')),
          inline: r.field('inline').boolean(),
          name: r.field('name').optionalString(),
          connectionPattern: cp.value === null ? undefined : cp.array(65536).map((row) => row.array(65536).map((b) => b.boolean())),
          lopOverrides: readOverride(r.field('lopOverrides'), dec),
          ropOverrides: readOverride(r.field('ropOverrides'), dec),
        };
      },
      buildOpFromGraph,
      (op, inputs) => op.makeNode(...inputs.slice(0, op.nExplicit)),
    ),
    codec<ScanOp, ScanParams>(
      'Scan',
      ScanOp,
      ['structure', 'layout'],
      // The step graph is closed (shared variables are outer inputs), so it is written as it is.
      (op, enc) => ({ graph: enc.graph(op.inner), ...op.spec, taps: op.spec.taps.map((t) => [...t]), finals: [...op.spec.finals], ...(op.spec.keep ? { keep: [...op.spec.keep] } : {}), name: op.name }),
      readScan,
      (p, ctx) => {
        const g = ctx.graph(p.graph);
        if (g.inputs.some((v) => v instanceof SharedVariable)) throw new TypeError("a Scan's step graph reads shared variables only through its inputs");
        return new ScanOp(new FunctionGraph(g.inputs, tensorOutputs(g.outputs)), p.spec, p.name);
      },
    ),
    codec<AsOp, never>(
      'AsOp',
      AsOp,
      ['fnId', 'itypes', 'otypes'],
      (op) => {
        throw new TypeError(
          `serialize: ${op} wraps a JS function, which a document cannot carry (reading a document never evaluates code); ` +
            'rebuild the asOp after loading, or write the op as a class with a registered codec',
        );
      },
      (r) => r.error('an asOp wraps a JS function, which documents never carry; it cannot be read'),
      () => {
        throw new TypeError('unreachable: AsOp is never decoded');
      },
    ),
  ];
  return list as unknown as ReadonlyArray<OpCodec<TensorOp<TensorVariable | TensorVariable[]>, never>>;
}

let installed = false;

/** Registers the tensor op codecs (once). */
export function installTensorCodecs(): void {
  if (installed) return;
  installed = true;
  for (const c of allCodecs()) registerOpCodec(c);
}

/** Whether a codec writes ops of a class that extends `base`. */
const writes = (c: OpCodec, base: abstract new (...args: never[]) => unknown): boolean => c.opClass.prototype instanceof base;

/** The op type names of the tensor codecs but random variables' (for tests that check every codec is exercised). */
export function tensorCodecNames(): string[] {
  installTensorCodecs();
  return registeredOpCodecs()
    .filter((c) => writes(c, TensorOp) && !writes(c, RandomVariable))
    .map((c) => c.name);
}

/** The op type names of the random variable codecs (their round trips are in test/tensor/random.test.ts). */
export function randomCodecNames(): string[] {
  installTensorCodecs();
  return registeredOpCodecs()
    .filter((c) => writes(c, RandomVariable))
    .map((c) => c.name);
}
