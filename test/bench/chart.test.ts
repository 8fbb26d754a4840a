// The bench chart (bench/lib/chart.ts), read back as XML: a bar per row with a figure (skipped rows
// have none), a panel per group with a log axis when its figures span 100x or more and a linear
// one otherwise, bar lengths that follow the figures on either axis, clear errors for bad results.
import t from 'tap';
import { benchChartSvg, LOG_RATIO } from '../../bench/lib/chart.js';
import type { Row, Unit } from '../../bench/lib/suite.js';
import { findAll, parseSvg, type XmlElement } from '../svg-xml.js';

function row(group: string, system: string, config: string, unit: Unit, value: number | undefined): Row {
  return { workload: group.split(' ')[0]!, group, system, config, unit, higherIsBetter: unit !== 'ms', status: value === undefined ? 'skipped' : 'ok', ...(value === undefined ? { note: 'not installed' } : { value }) };
}

const ROWS: readonly Row[] = [
  row('W1 fused chain', 'weft', '2 workers', 'ms', 1.2),
  row('W1 fused chain', 'tfjs cpu', 'eager, 1 thread', 'ms', 150),
  row('W1 fused chain', 'onnxruntime-node', '2 threads', 'ms', 2.5),
  row('W3 matmul', 'weft', '2 workers', 'GFLOP/s', 20),
  row('W3 matmul', 'tfjs cpu', 'eager, 1 thread', 'GFLOP/s', 8),
  row('W3 matmul', 'jax-js', 'wasm', 'GFLOP/s', undefined),
];

const barsOf = (root: XmlElement): XmlElement[] => findAll(root, (e) => e.tag === 'path' && e.attributes['aria-roledescription'] === 'bar');
/** A bar's length: Vega writes a bar as `M x,y h width v height h -width Z`. */
const lengthOf = (bar: XmlElement): number => Number(/^M[-\d.e]+,[-\d.e]+h([-\d.e]+)v/.exec(bar.attributes.d!)![1]);
const axisLabels = (root: XmlElement): string[] => findAll(root, (e) => e.attributes['aria-roledescription'] === 'axis').map((e) => e.attributes['aria-label']!);

t.test('a bar per row with a figure; log and linear panels; lengths follow the figures', async (t) => {
  const root = parseSvg(t, await benchChartSvg({ rows: ROWS, date: '2026-12-03T10:00:00.000Z', quick: true }));
  const bars = barsOf(root);
  t.equal(bars.length, ROWS.filter((r) => r.value !== undefined).length, 'five bars: the skipped row has none');
  const labels = bars.map((b) => b.attributes['aria-label']!);
  for (const r of ROWS.filter((x) => x.value !== undefined)) t.ok(labels.some((l) => l.includes(`${r.system} · ${r.config}`)), `a bar for ${r.group}: ${r.system}`);

  const x = axisLabels(root).filter((l) => l.startsWith('X-axis'));
  t.equal(x.length, 2, 'a panel per group');
  t.match(x[0]!, /log scale/, 'W1 spans 125x: a log axis');
  t.match(x[1]!, /linear scale/, 'W3 spans 2.5x: a linear axis');

  // W1 on a log axis from 1 to 1000 (the decades around 1.2 and 150), 420 px wide.
  const [w1, w1tf, w1ort, w3, w3tf] = bars.map(lengthOf);
  t.ok(Math.abs(w1tf! - (420 * Math.log10(150)) / 3) < 0.5, `150 ms: ${w1tf!.toFixed(1)} px`);
  t.ok(Math.abs(w1ort! - (420 * Math.log10(2.5)) / 3) < 0.5, `2.5 ms: ${w1ort!.toFixed(1)} px`);
  t.ok(w1! > 0 && w1! < w1ort!, 'the smallest figure still has a bar, the shortest');
  // W3 on a linear axis from 0 to 20.
  t.ok(Math.abs(w3! - 420) < 0.5, `20 GFLOP/s: the full width (${w3})`);
  t.ok(Math.abs(w3tf! - 168) < 0.5, `8 GFLOP/s: 40% of it (${w3tf})`);
});

t.test(`the log axis starts at a ratio of ${LOG_RATIO}`, async (t) => {
  const axis = async (hi: number): Promise<string> => {
    const rows = [row('W2 bandwidth', 'weft', '1 worker', 'GB/s', 1), row('W2 bandwidth', 'plain JS', '1 thread', 'GB/s', hi)];
    return axisLabels(parseSvg(t, await benchChartSvg({ rows }))).find((l) => l.startsWith('X-axis'))!;
  };
  t.match(await axis(99), /linear scale/, '99x: linear');
  t.match(await axis(100), /log scale/, '100x: log');
});

t.test('bad results are named', async (t) => {
  await t.rejects(benchChartSvg({} as never), { name: 'TypeError', message: 'benchChartSvg: expected bench results with a rows array (the JSON that bench/run.ts writes)' });
  await t.rejects(benchChartSvg({ rows: [row('W3 matmul', 'jax-js', 'wasm', 'GFLOP/s', undefined)] }), { message: 'benchChartSvg: none of the 1 rows has a figure to draw' });
  await t.rejects(benchChartSvg({ rows: [row('W3 matmul', 'weft', '1 worker', 'GFLOP/s', Number.NaN)] }), { message: 'benchChartSvg: row 0 (W3 matmul, weft, 1 worker) has a figure that is not a finite number: NaN' });
});
