// The error a call rejects with when one node fails: it names the op, the node, its place in
// the execution order and the shapes and dtypes it was given, and keeps the original as cause.
import type { Apply } from '../graph/apply.js';
import { isNdArray, shapeText, storageDtype } from '../tensor/ndarray.js';

function describe(value: unknown): string {
  if (isNdArray(value)) return `${storageDtype(value)} ${shapeText(value.shape)}`;
  return typeof value;
}

export class NodeError extends Error {
  constructor(
    readonly node: Apply,
    readonly position: number,
    inputs: readonly unknown[],
    cause: unknown,
  ) {
    const message = cause instanceof Error ? cause.message : String(cause);
    super(
      `${message}\n  in node ${position}: ${node}\n  input values: ${inputs.map(describe).join(', ') || 'none'}`,
      { cause },
    );
    this.name = 'NodeError';
  }
}
