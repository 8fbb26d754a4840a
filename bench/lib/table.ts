// The printed table: one line per row (workload, system, configuration, figure with its unit,
// speed relative to the reference row of its group, goals with their verdicts), then numbered
// notes for rows that were skipped, failed or gave wrong numbers.
import { formatValue, type Row } from './suite.js';

function pad(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
}

function goalText(r: Row): string {
  return (r.goalResults ?? [])
    .map((g) => {
      if (g.met === undefined) return `${g.label}: n/a`;
      const measured = g.measured === undefined ? '' : r.goals?.find((x) => x.label === g.label)?.kind === 'speedup' ? ` (${formatValue(g.measured)}x)` : '';
      return `${g.label}${measured} ${g.met ? 'met' : 'NOT met'}`;
    })
    .join('; ');
}

export function renderTable(rows: readonly Row[]): string {
  const notes: string[] = [];
  const body = rows.map((r) => {
    let figure: string;
    if (r.value !== undefined) figure = `${formatValue(r.value)} ${r.unit}`;
    else {
      notes.push(`${r.workload} ${r.system} ${r.config}: ${r.note ?? r.status}`);
      figure = `${r.status} [${notes.length}]`;
    }
    const ratio = r.ratio === undefined ? '' : r.reference ? '1.00x (ref)' : `${r.ratio >= 100 ? r.ratio.toFixed(0) : r.ratio.toPrecision(3)}x`;
    return [r.group, r.system, r.config, figure, ratio, goalText(r)];
  });
  const header = ['workload', 'system', 'configuration', 'figure', 'vs ref', 'goal'];
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const lines = [pad(header, widths), pad(widths.map((w) => '-'.repeat(w)), widths)];
  let group = '';
  for (let i = 0; i < body.length; i++) {
    const workload = rows[i]!.workload;
    if (group !== '' && workload !== group) lines.push('');
    group = workload;
    lines.push(pad(body[i]!, widths));
  }
  if (notes.length > 0) lines.push('', ...notes.map((n, i) => `[${i + 1}] ${n}`));
  return lines.join('\n');
}
