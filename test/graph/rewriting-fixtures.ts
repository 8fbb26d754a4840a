// Fixtures for the rewriting tests: graphs shown as formulas (exp(add(x, 2))), user ops of the
// kinds rewrites meet (one with props, an identity, a two-output op, one that refuses constant
// folding), a feature that vetoes chosen changes, and a context that collects the verbose log.
import ndarray from 'ndarray';
import { pt, weft } from '../helpers.js';
import type { Op as GraphOp } from '../../src/graph/op.js';
import { RewriteContext } from '../../src/graph/rewriting/index.js';

/** A variable as a formula: element-wise ops by their scalar name, constants by value. */
export function show(v: weft.Variable): string {
  const node = v.owner;
  if (!node) {
    if (v instanceof weft.Constant) return String(weft.tolist((v as weft.Constant<weft.Type, weft.NdArray>).data));
    return String(v);
  }
  const name = String(node.op).replace(/^Elemwise\{(.*)\}$/, '$1');
  const head = node.outputs.length > 1 ? `${name}.${v.index}` : name;
  return `${head}(${node.inputs.map(show).join(', ')})`;
}

/** Every output of `fg` as a formula, joined by ' ; '. */
export function showGraph(fg: weft.FunctionGraph): string {
  return fg.outputs.map(show).join(' ; ');
}

/** A graph over `inputs` that rewrites work on directly (no copy). */
export function graph(inputs: readonly weft.Variable[], outputs: readonly weft.Variable[]): weft.FunctionGraph {
  return new weft.FunctionGraph(inputs, outputs, { clone: false });
}

/** A context whose verbose log lands in `lines`. */
export function loggingContext(): { ctx: RewriteContext; lines: string[] } {
  const lines: string[] = [];
  return { ctx: new RewriteContext(true, (l) => lines.push(l)), lines };
}

function mapValues(x: weft.NdArray, f: (v: number) => number): weft.NdArray {
  const flat: number[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else flat.push(Number(v));
  };
  walk(weft.tolist(x));
  return ndarray(Float64Array.from(flat, f), [...x.shape]);
}

function unaryNode(op: GraphOp, x: unknown, nOut = 1): weft.Apply {
  const xv = pt.asTensorVariable(x as weft.TensorLike);
  const outs = Array.from({ length: nOut }, () => new weft.TensorType('float64', xv.type.shape).makeVariable());
  return new weft.Apply(op, [xv], outs);
}

/** out = x * factor, float64 (API.md's user op). */
export class Double extends weft.Op {
  static override readonly props = ['factor'] as const;
  constructor(readonly factor = 2) {
    super();
  }
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [mapValues(x!, (v) => v * this.factor)];
  }
  override inferShape(_node: weft.Apply, [xs]: readonly weft.SymbolicShape[]): weft.SymbolicShape[] {
    return [xs!];
  }
}

/** Like Double, but constant folding must leave it to run time. */
export class Lazy extends Double {
  override doConstantFolding(): boolean {
    return false;
  }
}

/** The identity, as an op of its own (what opRemove takes away). */
export class Identity extends weft.Op {
  override makeNode(x: unknown): weft.Apply {
    const xv = pt.asTensorVariable(x as weft.TensorLike);
    return new weft.Apply(this, [xv], [xv.type.makeVariable()]);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [mapValues(x!, (v) => v)];
  }
}

/** Two outputs: x + 1 and x - 1 (float64). */
export class Pair extends weft.Op<weft.pt.TensorVariable[]> {
  override makeNode(x: unknown): weft.Apply {
    return unaryNode(this, x, 2);
  }
  override perform(_node: weft.Apply, [x]: readonly weft.NdArray[]): weft.NdArray[] {
    return [mapValues(x!, (v) => v + 1), mapValues(x!, (v) => v - 1)];
  }
}

/** Refuses, by InconsistencyError, every graph in which `refuse(fg)` is true. */
export class Veto implements weft.Feature {
  refusals = 0;
  constructor(
    readonly refuse: (fg: weft.FunctionGraph) => boolean,
    readonly message = 'vetoed by the test',
  ) {}
  validate(fg: weft.FunctionGraph): void {
    if (this.refuse(fg)) {
      this.refusals += 1;
      throw new weft.InconsistencyError(this.message);
    }
  }
}

/** How many nodes of `fg` apply an op whose name is `name` (e.g. 'Elemwise{exp}'). */
export function countOps(fg: weft.FunctionGraph, name: string): number {
  let n = 0;
  for (const node of fg.applyNodes) if (String(node.op) === name) n += 1;
  return n;
}

/** The ops of a compiled function, in execution order, by name. */
export function opNames(fn: { fgraph: weft.FunctionGraph }): string[] {
  return fn.fgraph.toposort().map((n) => String(n.op));
}

/** Commonly used ops, taken from nodes the public API builds. */
export const ops = {
  get exp(): GraphOp {
    return pt.exp(pt.scalar()).owner!.op;
  },
  get log(): GraphOp {
    return pt.log(pt.scalar()).owner!.op;
  },
  get neg(): GraphOp {
    return pt.neg(pt.scalar()).owner!.op;
  },
  get tanh(): GraphOp {
    return pt.tanh(pt.scalar()).owner!.op;
  },
  get add(): GraphOp {
    return pt.add(pt.scalar(), pt.scalar()).owner!.op;
  },
  get sub(): GraphOp {
    return pt.sub(pt.scalar(), pt.scalar()).owner!.op;
  },
  get mul(): GraphOp {
    return pt.mul(pt.scalar(), pt.scalar()).owner!.op;
  },
};
