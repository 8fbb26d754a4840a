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

function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * How labels are written: quoted strings with `\n` line breaks (toDot's text), or Graphviz's
 * HTML-like labels (toSvg's: the WebAssembly Graphviz corrupts its memory laying out `\n` labels
 * inside clusters, and these also let a variable's type be set smaller than its name).
 */
export type DotLabels = 'text' | 'html';

/** A variable's label: its name (a constant's value when unnamed) over its type. */
function variableLabel(v: Variable, labels: DotLabels): string {
  const name = v.name ?? (isConstant(v) ? String(v) : '');
  // Each part is escaped once; the \n between them is DOT's line break.
  if (labels === 'text') return `"${dotEscape(name)}\\n${dotEscape(String(v.type))}"`;
  const type = `<font point-size="9">${htmlEscape(String(v.type))}</font>`;
  return name === '' ? `<${type}>` : `<${htmlEscape(name)}<br/>${type}>`;
}

function opLabel(node: Apply, labels: DotLabels): string {
  return labels === 'text' ? `"${dotEscape(String(node.op))}"` : `<${htmlEscape(String(node.op))}>`;
}

/** One graph that toDot draws: its nodes in order, its inputs and the outputs it marks. */
interface DrawnGraph {
  readonly nodes: readonly Apply[];
  readonly inputs: readonly Variable[];
  readonly outputs: readonly Variable[];
}

/** The inner graphs an op draws as clusters (OpFromGraph's, a Scan's step): none for most ops. */
function innerGraphsOf(node: Apply): readonly FunctionGraph[] {
  return node.op.innerGraphs?.() ?? [];
}

/**
 * Graphviz DOT: variables as ellipses (inputs green, constants grey, outputs blue), nodes as
 * boxes. The inner graphs of ops that have them (OpFromGraph, Scan) are drawn as clusters
 * (`subgraph cluster_k`) titled with the op, each once however many nodes apply its op; inner
 * graphs inside inner graphs nest. No edge joins a node to its cluster: lines to a cluster's
 * border (compound, lhead) made the WebAssembly Graphviz fail, and lines to a node inside it
 * cross the picture.
 */
export function toDot(target: Printable): string {
  return dotWithLabels(target, 'text');
}

/** toDot's drawing with labels written one way or the other (toSvg takes the HTML-like ones). */
export function dotWithLabels(target: Printable, labels: DotLabels): string {
  const { outputs, fgraph } = resolve(target);
  let drawn = 0;
  const lines = ['digraph weft {', '  rankdir=TB;'];
  const clusters = new Set<FunctionGraph>();

  /** Writes one graph's statements; ids are per graph, as a constant may sit in two graphs. */
  const draw = (graph: DrawnGraph, indent: string): void => {
    const ids = new Map<Variable | Apply, string>();
    const id = (x: Variable | Apply): string => {
      let s = ids.get(x);
      if (s === undefined) {
        s = `n${drawn++}`;
        ids.set(x, s);
      }
      return s;
    };
    const outputSet = new Set(graph.outputs);
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
      lines.push(`${indent}${id(v)} [shape=ellipse, label=${variableLabel(v, labels)}${style ? `, ${style}` : ''}];`);
    };
    // An inner graph's inputs are drawn even when unread: they are part of its signature.
    for (const v of graph.inputs) declare(v);
    for (const node of graph.nodes) {
      lines.push(`${indent}${id(node)} [shape=box, label=${opLabel(node, labels)}];`);
      node.inputs.forEach((v, i) => {
        declare(v);
        lines.push(`${indent}${id(v)} -> ${id(node)}${node.inputs.length > 1 ? ` [label="${i}"]` : ''};`);
      });
      node.outputs.forEach((o) => {
        declare(o);
        lines.push(`${indent}${id(node)} -> ${id(o)};`);
      });
      for (const inner of innerGraphsOf(node)) {
        if (clusters.has(inner)) continue;
        // Numbered before the graphs nested in it are drawn, so that every cluster's name differs.
        const name = `cluster_${clusters.size}`;
        clusters.add(inner);
        lines.push(`${indent}subgraph ${name} {`);
        lines.push(`${indent}  label="${dotEscape(String(node.op))}"; style="rounded,dashed"; color="#6c757d";`);
        draw({ nodes: inner.toposort(), inputs: inner.inputs, outputs: inner.outputs }, `${indent}  `);
        lines.push(`${indent}}`);
      }
    }
    for (const o of graph.outputs) declare(o);
  };

  draw({ nodes: fgraph ? fgraph.toposort() : ioToposort([], outputs), inputs: [], outputs }, '  ');
  lines.push('}');
  return lines.join('\n');
}
