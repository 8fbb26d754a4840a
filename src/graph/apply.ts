// Apply: one application of an Op to input variables, producing output variables. Nodes are
// the vertices of the graph; the FunctionGraph may rewire `inputs`, nothing else changes a node.
import type { Op } from './op.js';
import type { Variable } from './variable.js';

export class Apply<O extends Op = Op> {
  readonly inputs: Variable[];
  readonly outputs: readonly Variable[];

  constructor(
    readonly op: O,
    inputs: readonly Variable[],
    outputs: readonly Variable[],
  ) {
    this.inputs = [...inputs];
    this.outputs = [...outputs];
    this.outputs.forEach((out, i) => {
      if (out.owner !== null && out.owner !== this) {
        throw new Error(`Apply(${op}): output ${i} (${out}) already belongs to another node`);
      }
      out.owner = this;
      out.index = i;
    });
  }

  /** The only output; throws for multi-output nodes, which must be indexed explicitly. */
  get out(): Variable {
    if (this.outputs.length !== 1) {
      throw new Error(`${this.op} has ${this.outputs.length} outputs; use node.outputs[i]`);
    }
    return this.outputs[0]!;
  }

  /** A node with the same op and inputs and fresh outputs. */
  clone(): Apply<O> {
    return new Apply(this.op, this.inputs, this.outputs.map((o) => o.clone()));
  }

  /**
   * The same op applied to other inputs. When every new input has exactly the old input's type
   * the outputs are cloned directly; otherwise the op makes the node again. `strict` (Theano's
   * meaning) also requires each new input to have its old input's type or a more specific one, and
   * the remade outputs to stay compatible with the old ones; without it any inputs the op accepts
   * will do.
   */
  cloneWithNewInputs(inputs: readonly Variable[], strict = true): Apply<O> {
    if (inputs.length !== this.inputs.length) {
      throw new Error(`${this.op}: cloneWithNewInputs got ${inputs.length} inputs, the node has ${this.inputs.length}`);
    }
    if (strict) {
      inputs.forEach((v, i) => {
        const old = this.inputs[i]!;
        if (!old.type.equals(v.type) && !old.type.convertVariable(v)) {
          throw new TypeError(
            `${this.op}: cloneWithNewInputs (strict) got ${v} of type ${v.type} for input ${i}, where ${old.type} (or a more specific type) was expected`,
          );
        }
      });
    }
    const sameTypes = inputs.every((v, i) => v.type.equals(this.inputs[i]!.type));
    if (sameTypes) {
      return new Apply(this.op, inputs, this.outputs.map((o) => o.clone()));
    }
    const node = this.op.makeNode(...inputs) as Apply<O>;
    if (strict) {
      node.outputs.forEach((o, i) => {
        const old = this.outputs[i]!;
        if (!old.type.equals(o.type) && !old.type.convertVariable(o)) {
          throw new TypeError(
            `${this.op}: with the new inputs, output ${i} has type ${o.type} where ${old.type} was expected`,
          );
        }
      });
    }
    return node;
  }

  toString(): string {
    return `${this.op}(${this.inputs.map(String).join(', ')})`;
  }
}
