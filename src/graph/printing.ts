// Readable views of a graph: Theano-style indented text (debugprint) and Graphviz DOT (toDot).
// Both accept variables, a FunctionGraph, or anything that has one (a compiled function).
import type { Apply } from './apply.js';
import { FunctionGraph } from './fgraph.js';
import type { IndexMap } from './op.js';
import { ioToposort } from './traversal.js';
import { isConstant, type Variable } from './variable.js';

export type Printable = Variable | readonly Variable[] | FunctionGraph | { readonly fgraph: FunctionGraph };

function resolve(target: Printable): { outputs: readonly Variable[]; fgraph?: FunctionGraph } {
  if (target instanceof FunctionGraph) return { outputs: target.outputs, fgraph: target };
  if (Array.isArray(target)) return { outputs: target as readonly Variable[] };
  if ('fgraph' in (target as object) && (target as { fgraph: unknown }).fgraph instanceof FunctionGraph) {
    const fgraph = (target as { fgraph: FunctionGraph }).fgraph;
    return { outputs: fgraph.outputs, fgraph };
  }
  return { outputs: [target as Variable] };
}

/** Spreadsheet-style labels: A..Z, AA, AB, ... */
function label(n: number): string {
  let s = '';
  let k = n;
  do {
    s = String.fromCharCode(65 + (k % 26)) + s;
    k = Math.floor(k / 26) - 1;
  } while (k >= 0);
  return s;
}

function mapText(name: string, map: IndexMap): string {
  const entries = Object.entries(map);
  if (entries.length === 0) return '';
  return ` ${name}={${entries.map(([o, ins]) => `${o}: [${ins.join(', ')}]`).join(', ')}}`;
}

function varHead(v: Variable): string {
  if (!v.owner) return String(v);
  const op = String(v.owner.op);
  return v.owner.outputs.length > 1 ? `${op}.${v.index}` : op;
}

/**
 * Theano-style text: one line per variable, its inputs indented below. A node already printed
 * is shown again by its id alone. For a compiled graph each node line ends with its position in
 * the execution order.
 */
export function debugprint(target: Printable): string {
  const { outputs, fgraph } = resolve(target);
  const ids = new Map<Variable, string>();
  const idOf = (v: Variable): string => {
    let id = ids.get(v);
    if (id === undefined) {
      id = label(ids.size);
      ids.set(v, id);
    }
    return id;
  };
  const order = new Map<Apply, number>();
  if (fgraph) fgraph.toposort().forEach((n, i) => order.set(n, i));
  const printedNodes = new Set<Apply>();
  const lines: string[] = [];

  const stack: Array<{ v: Variable; prefix: string; childPrefix: string }> = [];
  for (let k = outputs.length - 1; k >= 0; k--) stack.push({ v: outputs[k]!, prefix: '', childPrefix: '' });
  while (stack.length > 0) {
    const { v, prefix, childPrefix } = stack.pop()!;
    const node = v.owner;
    let line = `${prefix}${varHead(v)} [id ${idOf(v)}]`;
    if (v.name !== undefined && node) line += ` '${v.name}'`;
    if (node) {
      line += mapText('d', node.op.destroyMap) + mapText('v', node.op.viewMap);
      const pos = order.get(node);
      if (pos !== undefined) line += `   ${pos}`;
    }
    lines.push(line);
    if (!node || printedNodes.has(node)) continue;
    printedNodes.add(node);
    const n = node.inputs.length;
    for (let i = n - 1; i >= 0; i--) {
      const last = i === n - 1;
      stack.push({ v: node.inputs[i]!, prefix: `${childPrefix} |`, childPrefix: `${childPrefix}${last ? '  ' : ' |'}` });
    }
  }
  return lines.join('\n');
}

function dotEscape(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** Graphviz DOT: variables as ellipses (inputs green, constants grey, outputs blue), nodes as boxes. */
export function toDot(target: Printable): string {
  const { outputs, fgraph } = resolve(target);
  const nodes = fgraph ? fgraph.toposort() : ioToposort([], outputs);
  const ids = new Map<Variable | Apply, string>();
  const id = (x: Variable | Apply): string => {
    let s = ids.get(x);
    if (s === undefined) {
      s = `n${ids.size}`;
      ids.set(x, s);
    }
    return s;
  };
  const lines = ['digraph weft {', '  rankdir=TB;'];
  const outputSet = new Set(outputs);
  const declared = new Set<Variable>();
  const declare = (v: Variable): void => {
    if (declared.has(v)) return;
    declared.add(v);
    const style = outputSet.has(v)
      ? 'style=filled, fillcolor="#cfe2ff"'
      : isConstant(v)
        ? 'style=filled, fillcolor="#e9ecef"'
        : !v.owner
          ? 'style=filled, fillcolor="#d1e7dd"'
          : '';
    // Each part is escaped once; the \n between them is DOT's line break.
    const text = `${dotEscape(v.name ?? (isConstant(v) ? String(v) : ''))}\\n${dotEscape(String(v.type))}`;
    lines.push(`  ${id(v)} [shape=ellipse, label="${text}"${style ? `, ${style}` : ''}];`);
  };
  for (const node of nodes) {
    lines.push(`  ${id(node)} [shape=box, label="${dotEscape(String(node.op))}"];`);
    node.inputs.forEach((v, i) => {
      declare(v);
      lines.push(`  ${id(v)} -> ${id(node)}${node.inputs.length > 1 ? ` [label="${i}"]` : ''};`);
    });
    node.outputs.forEach((o) => {
      declare(o);
      lines.push(`  ${id(node)} -> ${id(o)};`);
    });
  }
  for (const o of outputs) declare(o);
  lines.push('}');
  return lines.join('\n');
}
