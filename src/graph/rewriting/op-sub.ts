// OpSub and OpRemove (Theano's): replace every application of one op by another op on the same
// inputs, or remove an identity-like op by forwarding its single input.
import type { Op } from '../op.js';
import type { NodeRewriter } from './rewriter.js';

/** Applications of `from` become applications of `to` on the same inputs. */
export function opSub(from: Op, to: Op, name = `OpSub(${from} -> ${to})`): NodeRewriter {
  return {
    kind: 'node',
    name,
    tracks: [from],
    transform: (_fg, node) => to.makeNode(...node.inputs).outputs,
  };
}

/** Applications of `op` (one input, one output of the same type) are replaced by their input. */
export function opRemove(op: Op, name = `OpRemove(${op})`): NodeRewriter {
  return {
    kind: 'node',
    name,
    tracks: [op],
    transform: (_fg, node) => {
      const x = node.inputs[0];
      if (node.inputs.length !== 1 || node.outputs.length !== 1 || !x || !x.type.equals(node.outputs[0]!.type)) return false;
      return [x];
    },
  };
}
