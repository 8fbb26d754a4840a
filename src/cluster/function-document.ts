// What both ends of the queue read from a function's document: its signature (the caller checks
// and converts arguments with it) and, on a worker, the function compiled from it. A function that
// updates shared variables keeps no state on a worker: the shared values it updates arrive with
// each call as extra inputs, and their new values leave as extra outputs, for the caller to apply.
import { compile, type WeftFunction } from '../compile/function.js';
import { In } from '../compile/function-input.js';
import type { Pool } from '../compile/pool.js';
import { deserialize, type DeserializedFunction, type DeserializedGraph } from '../compile/serialize-function.js';
import type { NdArray } from '../tensor/core/ndarray.js';
import type { TensorSharedVariable, TensorVariable } from '../tensor/core/variable.js';

/** A document's calling convention. */
export interface Signature {
  /** The function's name in errors: `function 'f'` or `the function`, as a local function says it. */
  readonly label: string;
  readonly name: string | undefined;
  /** How each explicit input is named in argument errors (`input 0 (x) of function 'f'`). */
  readonly inputWhere: readonly string[];
  /** The inputs' names as an argument-count error lists them. */
  readonly inputNames: readonly string[];
  readonly outputs: number;
  /** The shared variables the function updates, in the document's order (fresh ones, from the document). */
  readonly updated: readonly TensorSharedVariable[];
}

function labelOf(name: string | undefined): string {
  return name ? `function '${name}'` : 'the function';
}

/** The loaded document and its signature; a malformed or hostile document throws DeserializeError. */
export function readDocument(text: string): { readonly doc: DeserializedGraph | DeserializedFunction; readonly signature: Signature } {
  const doc = deserialize(text);
  const name = doc.kind === 'function' ? doc.name : undefined;
  const label = labelOf(name);
  const inputWhere = doc.inputs.map((x, i) => {
    return `input ${i} (${x.name ?? 'unnamed'}) of ${label}`;
  });
  const inputNames = doc.inputs.map((x, i) => x.name ?? `input ${i}`);
  const updated = doc.kind === 'function' ? doc.updates.map(([s]) => s) : [];
  return { doc, signature: { label, name, inputWhere, inputNames, outputs: doc.outputs.length, updated } };
}

/** A function a worker runs: explicit inputs, then the updated shared values; outputs, then their new values. */
export type DocumentFunction = WeftFunction<NdArray[], unknown[]>;

/** Compiles a document on `pool` (the default pool without one) as the worker runs it. */
export async function compileDocument(text: string, pool: Pool | undefined): Promise<{ readonly fn: DocumentFunction; readonly signature: Signature }> {
  const { doc, signature } = readDocument(text);
  const options = { ...(pool ? { pool } : {}), ...(signature.name ? { name: signature.name } : {}) };
  if (doc.kind === 'variables' || doc.updates.length === 0) {
    const fn = await compile(doc.inputs, doc.outputs, options);
    return { fn: fn as unknown as DocumentFunction, signature };
  }
  const standIns = doc.updates.map(([s]) => s.type.makeVariable(s.name) as TensorVariable);
  // The sent values are the worker's own copies: the function may update them in place.
  const fn = await compile([...doc.inputs, ...standIns.map((v) => In(v, { mutable: true }))], [...doc.outputs, ...doc.updates.map(([, u]) => u)], {
    ...options,
    givens: doc.updates.map(([s], k) => [s, standIns[k]!] as [TensorVariable, TensorVariable]),
  });
  return { fn: fn as unknown as DocumentFunction, signature };
}
