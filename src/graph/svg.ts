// toSvg: a picture of a graph, toDot's drawing laid out and drawn by Graphviz compiled to
// WebAssembly (@hpcc-js/wasm-graphviz), in this process: no Graphviz program is needed, in Node or
// a browser. The module is loaded on the first call (it is large, and most programs never draw).
import type { Graphviz } from '@hpcc-js/wasm-graphviz';
import { dotWithLabels, type Printable } from './printing.js';

let graphviz: Promise<Graphviz> | undefined;

/** The Graphviz instance, loaded once; a failed load is retried by the next call. */
function loadGraphviz(): Promise<Graphviz> {
  graphviz ??= import('@hpcc-js/wasm-graphviz')
    .then((m) => m.Graphviz.load())
    .catch((e: unknown) => {
      graphviz = undefined;
      throw new Error(`toSvg: could not load Graphviz (@hpcc-js/wasm-graphviz): ${(e as Error)?.message ?? e}`, { cause: e });
    });
  return graphviz;
}

/** Drops the instance: a layout that failed may have left its memory unusable for the next. */
async function unloadGraphviz(): Promise<void> {
  graphviz = undefined;
  (await import('@hpcc-js/wasm-graphviz')).Graphviz.unload();
}

/** Fonts every viewer has, for boxes, ellipses, cluster titles and edge labels alike. */
const FONTS = '  graph [fontname="Helvetica"]; node [fontname="Helvetica", fontsize=11]; edge [fontname="Helvetica", fontsize=9];';

/**
 * An SVG picture of a graph (the targets of toDot: variables, a FunctionGraph, a compiled
 * function): toDot's drawing, with the inner graphs of OpFromGraph and Scan as clusters.
 * Asynchronous because Graphviz's WebAssembly loads asynchronously (once).
 */
export async function toSvg(target: Printable): Promise<string> {
  const lines = dotWithLabels(target, 'html').split('\n');
  lines.splice(1, 0, FONTS);
  const dot = lines.join('\n');
  // Graphviz's WebAssembly build has failed now and then on a reused instance (a RuntimeError:
  // a table index out of bounds), so a failure is tried once more on a fresh instance.
  for (let attempt = 1; ; attempt++) {
    try {
      return (await loadGraphviz()).dot(dot);
    } catch (e) {
      await unloadGraphviz();
      if (attempt === 2) throw new Error(`toSvg: Graphviz could not lay out the graph (${lines.length} lines of DOT): ${(e as Error)?.message ?? e}`, { cause: e });
    }
  }
}
