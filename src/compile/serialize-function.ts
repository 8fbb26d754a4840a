// weft.serialize and weft.deserialize: graphs of tensor variables, or compiled functions, as
// JSON text and back. A function is written as the graph it runs (its rewritten fgraph: explicit
// inputs, outputs and update values, with the shared variables and their current values), so a
// loaded function needs no rewriting to be the same computation; compiling it again rewrites it
// once more, which leaves a rewritten graph as it is or simplifies it further.
import type { Op } from '../graph/op.js';
import { registerOpCodec as registerInRegistry, type OpCodec } from '../graph/op-codecs.js';
import type { PropsOpClass } from '../graph/prop-codec.js';
import { decodeDocument, encodeDocument, type DecodeOptions } from '../graph/serialize.js';
import { SharedVariable } from '../graph/shared.js';
import { graphInputs } from '../graph/traversal.js';
import { isConstant, Variable } from '../graph/variable.js';
import { installTensorCodecs } from '../tensor/serialize/codecs.js';
import { withRegisteredTypes } from '../graph/type-codecs.js';
import { tensorTypeCodec } from '../tensor/serialize/value-codec.js';
import { TensorType } from '../tensor/core/type.js';

/** Tensors, and the Type classes users registered (graph/type-codecs.ts). */
const typeCodec = withRegisteredTypes(tensorTypeCodec, (t) => t instanceof TensorType);
import { isTensorVariable, type TensorSharedVariable, type TensorVariable } from '../tensor/core/variable.js';
import type { CompiledFunction } from './function.js';
import { FunctionInput, In } from './function-input.js';

/** A loaded graph: fresh variables, its free inputs, and its shared variables with their stored values. */
export interface DeserializedGraph {
  readonly kind: 'variables';
  readonly inputs: TensorVariable[];
  readonly outputs: TensorVariable[];
  readonly shared: TensorSharedVariable[];
}

/**
 * A loaded function, ready for `weft.compile(inputs, outputs, { updates, name })`. Inputs that
 * were mutable or borrowed come back as `weft.In(...)` with those options. `outputs` is always an
 * array (a document does not say whether the function returned one output bare).
 */
export interface DeserializedFunction {
  readonly kind: 'function';
  readonly inputs: Array<TensorVariable | FunctionInput>;
  readonly outputs: TensorVariable[];
  readonly updates: Array<[TensorSharedVariable, TensorVariable]>;
  readonly name: string | undefined;
  readonly shared: TensorSharedVariable[];
}

/** Whether `x` is a function weft.compile made. */
export function isWeftFunction(x: unknown): x is CompiledFunction {
  return typeof x === 'function' && 'fgraph' in x && 'updated' in x && 'inputs' in x;
}

/**
 * `variablesOrFn` as JSON text: a variable or an array of variables (with the graph between
 * their free inputs and them; constants and shared variables are stored with their values), or
 * a compiled function (its rewritten graph, inputs, outputs, updates and name).
 */
export function serialize(variablesOrFn: Variable | readonly Variable[] | CompiledFunction): string {
  installTensorCodecs();
  if (isWeftFunction(variablesOrFn)) {
    const fn = variablesOrFn;
    const fg = fn.fgraph;
    const nExplicit = fn.inputs.length;
    const nOut = fg.outputs.length - fn.updated.length;
    return encodeDocument(typeCodec, fg.inputs.slice(0, nExplicit), fg.outputs.slice(0, nOut), {
      name: fn.name === 'weft function' ? undefined : fn.name,
      inputOptions: fn.inputs.map((x) => ({ mutable: x.mutable, borrow: x.borrow, name: x.name })),
      updates: fn.updated.map((s, k) => [s, fg.outputs[nOut + k]!] as const),
      // Default updates belong to the user's graph, which reads the inputs the function was compiled from.
      originalInputs: fn.inputs.map((x, i) => [x.variable, fg.inputs[i]!] as const),
    });
  }
  const outputs: readonly unknown[] = Array.isArray(variablesOrFn) ? variablesOrFn : [variablesOrFn];
  outputs.forEach((v, i) => {
    if (!(v instanceof Variable)) throw new TypeError(`serialize: output ${i} is not a variable (or a compiled function): ${String(v)}`);
  });
  const vars = outputs as readonly Variable[];
  const inputs = graphInputs(vars).filter((v) => !isConstant(v) && !(v instanceof SharedVariable));
  return encodeDocument(typeCodec, inputs, vars);
}

/**
 * Loads a document written by `serialize`. The whole document is checked before anything is
 * built, and nothing in it is ever evaluated as code: an unknown op, a malformed or hostile
 * document throws a DeserializeError naming the field (`nodes[3].op.props.axis: ...`).
 */
export function deserialize(json: string, options: DecodeOptions = {}): DeserializedGraph | DeserializedFunction {
  installTensorCodecs();
  const doc = decodeDocument(typeCodec, json, options);
  const shared = doc.shared as TensorSharedVariable[];
  const outputs = doc.outputs as TensorVariable[];
  if (doc.kind === 'variables') return { kind: 'variables', inputs: doc.inputs as TensorVariable[], outputs, shared };
  const inputs = doc.inputs.map((v, i) => {
    const o = doc.inputOptions[i]!;
    const x = v as TensorVariable;
    if (!o.mutable && !o.borrow && o.name === x.name) return x;
    return In(x, { mutable: o.mutable, borrow: o.borrow, ...(o.name !== undefined ? { name: o.name } : {}) });
  });
  return {
    kind: 'function',
    inputs,
    outputs,
    updates: doc.updates as Array<[TensorSharedVariable, TensorVariable]>,
    name: doc.name,
    shared,
  };
}

/**
 * Registers how a class of ops is serialized: the class itself (its `static props` are written
 * with their `static propKinds`, plain JSON without one, and read back into `new OpClass(...props)`;
 * named `options.name`, default the class's name), or a codec (its name in documents, encode,
 * decode with checks, build through the constructor). Names and classes already registered are refused.
 */
export function registerOpCodec<O extends Op, P>(codecOrClass: OpCodec<O, P> | PropsOpClass<O>, options?: { readonly name?: string }): void {
  installTensorCodecs();
  registerInRegistry(codecOrClass, options);
}
