// The bench chart (`npm run bench -- --chart FILE.svg`, later `weft bench --chart`): the results'
// rows as horizontal bars, one panel per group (a group's rows share a unit), one bar per system
// and configuration coloured by system, on a log axis where a panel's figures differ by 100x or
// more. A Vega-Lite spec rendered to SVG by Vega's headless View: no browser, no canvas.
import * as vega from 'vega';
import type { TopLevelSpec } from 'vega-lite';
import { compile } from 'vega-lite';
import { formatValue, type Row } from './suite.js';

/** What the chart reads of the results that run.ts writes as JSON. */
export interface ChartedResults {
  readonly rows: readonly Row[];
  readonly date?: string;
  readonly quick?: boolean;
}

/** A panel switches to a log axis when its largest figure is this many times its smallest. */
export const LOG_RATIO = 100;

/** One bar: a row with a figure. */
interface Bar {
  readonly label: string;
  readonly system: string;
  readonly value: number;
  readonly shown: string;
}

interface Panel {
  readonly group: string;
  readonly unit: string;
  readonly higherIsBetter: boolean;
  readonly bars: readonly Bar[];
  readonly log: boolean;
}

/**
 * The rows with a figure, by group in the order they came (a group with rows in two units makes
 * a panel per unit: a panel has one axis), each a bar labelled by system and configuration.
 */
function panelsOf(rows: readonly Row[]): Panel[] {
  const groups = new Map<string, Row[]>();
  rows.forEach((r, i) => {
    if (typeof r.group !== 'string' || typeof r.system !== 'string') throw new TypeError(`benchChartSvg: row ${i} has no group or system (got ${JSON.stringify(r).slice(0, 120)})`);
    if (r.status !== 'ok' || r.value === undefined) return;
    if (!Number.isFinite(r.value)) throw new TypeError(`benchChartSvg: row ${i} (${r.group}, ${r.system}, ${r.config}) has a figure that is not a finite number: ${r.value}`);
    const key = `${r.group}\u0000${r.unit}`;
    const list = groups.get(key) ?? [];
    list.push(r);
    groups.set(key, list);
  });
  return [...groups.values()].map((list) => {
    const group = list[0]!.group;
    const seen = new Map<string, number>();
    const bars = list.map((r) => {
      const base = `${r.system} · ${r.config}`;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      return { label: n === 1 ? base : `${base} (${n})`, system: r.system, value: r.value!, shown: `${formatValue(r.value!)} ${r.unit}` };
    });
    const values = bars.map((b) => b.value);
    const min = Math.min(...values);
    const max = Math.max(...values);
    return { group, unit: list[0]!.unit, higherIsBetter: list[0]!.higherIsBetter, bars, log: min > 0 && max / min >= LOG_RATIO };
  });
}

/** The powers of ten around these positive figures, the lower one strictly below the smallest. */
function decades(values: readonly number[]): [number, number] {
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)));
  return [lo < Math.min(...values) ? lo : lo / 10, hi];
}

/** The Vega-Lite spec of the chart: a vertical stack of panels with one colour legend for the systems. */
export function benchChartSpec(results: ChartedResults): TopLevelSpec {
  if (!results || !Array.isArray(results.rows)) throw new TypeError('benchChartSvg: expected bench results with a rows array (the JSON that bench/run.ts writes)');
  const panels = panelsOf(results.rows);
  if (panels.length === 0) throw new TypeError(`benchChartSvg: none of the ${results.rows.length} rows has a figure to draw`);
  const title = `weft bench${results.quick ? ' (quick)' : ''}${results.date ? `, ${results.date.slice(0, 10)}` : ''}`;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    config: { font: 'Helvetica, Arial, sans-serif', view: { stroke: null }, axisY: { labelLimit: 320 }, legend: { orient: 'top' } },
    vconcat: panels.map((p) => {
      // On a log axis a bar is drawn from the axis' start (a power of ten below every figure) to
      // its figure: Vega-Lite draws log bars from no base at all (zero width) otherwise.
      const [lo, hi] = p.log ? decades(p.bars.map((b) => b.value)) : [0, 0];
      const scale = p.log ? { type: 'log' as const, domain: [lo, hi], nice: false } : { type: 'linear' as const, zero: true };
      const axisTitle = `${p.unit}, ${p.higherIsBetter ? 'higher' : 'lower'} is better${p.log ? ' (log scale)' : ''}`;
      return {
        title: { text: p.group, anchor: 'start' as const, fontSize: 12 },
        width: 420,
        height: { step: 18 },
        data: { values: p.bars.map((b) => ({ ...b })) },
        encoding: {
          y: { field: 'label', type: 'nominal' as const, sort: null, title: null },
          x: { field: 'value', type: 'quantitative' as const, scale, title: axisTitle },
        },
        layer: [
          {
            mark: { type: 'bar' as const },
            encoding: {
              ...(p.log ? { x2: { datum: lo } } : {}),
              color: { field: 'system', type: 'nominal' as const, legend: { title: 'system' } },
              tooltip: [{ field: 'label', type: 'nominal' as const }, { field: 'shown', type: 'nominal' as const, title: 'figure' }],
            },
          },
          { mark: { type: 'text' as const, align: 'left' as const, dx: 3, fontSize: 10 }, encoding: { text: { field: 'shown', type: 'nominal' as const } } },
        ],
      };
    }),
  };
}

/** The chart as an SVG document, rendered headlessly (Vega's View with no renderer, then toSVG). */
export async function benchChartSvg(results: ChartedResults): Promise<string> {
  const view = new vega.View(vega.parse(compile(benchChartSpec(results)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
