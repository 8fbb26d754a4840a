// Running one node's perform: the error a call rejects with when it fails (NodeError: the op, the
// node, its place in the execution order, the shapes and dtypes it was given, the original as
// cause), and the copies perform must get of what has to survive it (copiedArguments).
import { dtypeOfTypedArray } from '../kernels/dtype.js';
import type { Apply } from './apply.js';

/** "float64 [2, 3]" for an array value (anything with a typed-array `data` and a `shape`). */
function describe(value: unknown): string {
  const v = value as { data?: unknown; shape?: unknown };
  if (typeof value === 'object' && value !== null && Array.isArray(v.shape)) {
    return `${dtypeOfTypedArray(v.data) ?? 'array'} [${(v.shape as number[]).join(', ')}]`;
  }
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

/**
 * Runs a node's perform on `args` and checks that it returned one value per output; any failure
 * becomes a NodeError naming the node and `described` (the inputs as the caller holds them, when
 * perform was given private copies).
 */
export function performNode(node: Apply, position: number, args: readonly unknown[], described: readonly unknown[] = args): unknown[] {
  try {
    const outs = node.op.perform(node, args);
    if (outs.length !== node.outputs.length) {
      throw new Error(`${node.op}.perform returned ${outs.length} values for ${node.outputs.length} outputs`);
    }
    return outs;
  } catch (e) {
    throw new NodeError(node, position, described, e);
  }
}

/**
 * perform's arguments where the values must survive it: copies of the inputs the node's destroyMap
 * says it overwrites ('destroyed', for values that outlive the node), or of every input ('all',
 * where perform may keep what it is given); the other values as they are.
 */
export function copiedArguments(node: Apply, values: readonly unknown[], which: 'destroyed' | 'all'): unknown[] {
  const destroyed = which === 'destroyed' ? new Set(Object.values(node.op.destroyMap).flat()) : undefined;
  // An undefined value (one a planner does not know yet) has nothing to copy.
  return values.map((v, i) => (v !== undefined && (!destroyed || destroyed.has(i)) ? node.inputs[i]!.type.copyValue(v) : v));
}

/** performNode on copiedArguments: errors describe the values as the caller holds them. */
export function performOnCopies(node: Apply, position: number, values: readonly unknown[], which: 'destroyed' | 'all'): unknown[] {
  return performNode(node, position, copiedArguments(node, values, which), values);
}
