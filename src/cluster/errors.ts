// A failed call comes back to the caller as the error class and message it would have had locally:
// the worker writes "Name: message" as the job's failed reason (BullMQ keeps only a text), and the
// caller makes an error of that class again (the classes weft exports, and JS's own).
import { AbortError } from '../graph/abort.js';
import { InconsistencyError } from '../graph/feature.js';
import { MissingInputError } from '../graph/fgraph.js';
import { DeserializeError } from '../graph/json-reader.js';
import { NodeError } from '../graph/node-error.js';
import { ValueTypeError } from '../tensor/core/ndarray.js';
import { ShapeMismatchError } from '../tensor/elemwise/elemwise.js';
import { LinalgError } from '../kernels/lu.js';
import { PoolClosedError } from '../workers/pool.js';
import { ArenaFullError } from '../workers/arena.js';
import { NanGuardError } from '../compile/nan-guard-mode.js';
import { UnusedInputError } from '../compile/function.js';

type ErrorClass = abstract new (...args: never[]) => Error;

/** The classes a remote error may come back as, by name. */
const CLASSES: ReadonlyMap<string, ErrorClass> = new Map<string, ErrorClass>([
  ['Error', Error], ['TypeError', TypeError], ['RangeError', RangeError], ['SyntaxError', SyntaxError],
  ['AbortError', AbortError], ['InconsistencyError', InconsistencyError], ['MissingInputError', MissingInputError],
  ['DeserializeError', DeserializeError], ['NodeError', NodeError], ['ValueTypeError', ValueTypeError],
  ['ShapeMismatchError', ShapeMismatchError], ['LinalgError', LinalgError], ['PoolClosedError', PoolClosedError],
  ['ArenaFullError', ArenaFullError], ['NanGuardError', NanGuardError], ['UnusedInputError', UnusedInputError],
]);

/** The failed reason a worker gives for `e`. */
export function failedReason(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return `Error: ${String(e)}`;
}

/** The error a caller gets for a failed reason: its class again when weft knows it, else an Error with the name. */
export function errorOfReason(reason: string): Error {
  const m = /^([A-Za-z_$][\w$]*): ([\s\S]*)$/.exec(reason);
  const name = m?.[1] ?? 'Error';
  const message = m ? m[2]! : reason;
  const error = new Error(message);
  const cls = CLASSES.get(name);
  if (cls) Object.setPrototypeOf(error, cls.prototype);
  // Set as the class sets it (own property), so the error prints as it did where it was thrown.
  Object.defineProperty(error, 'name', { value: name, writable: true, configurable: true, enumerable: false });
  return error;
}
