// The SVG timeline of a profile's trace events (fn.profile.toSvgTimeline()): one lane for the
// calling thread and one per worker that ran tasks, each task a bar coloured by its op (a legend
// names the colours), the time a thread spent without a task inside a call drawn as a hatched
// wait span (a pixel wide at least; each lane's title sums them all), and a time axis in ms. Hand-written SVG: no browser or library needed.
import type { CopyEvent, TraceEvent } from './profile.js';

/** A bar of the timeline: a node's task (named by its op) or a copy task (one name for all copies). */
interface Bar {
  /** The legend's entry, which sets the colour. */
  readonly name: string;
  /** The bar's tooltip after its name. */
  readonly detail: string;
  readonly start: number;
  readonly duration: number;
  readonly call: number;
  readonly thread: number;
}

/** The legend's name for the copies of large arguments and results. */
export const COPIES_NAME = 'copies of arguments and results';

function barsOf(events: readonly TraceEvent[], copies: readonly CopyEvent[]): Bar[] {
  return [
    ...events.map((e) => ({ name: String(e.node.op), detail: String(e.node), start: e.start, duration: e.duration, call: e.call, thread: e.thread })),
    ...copies.map((e) => ({ name: COPIES_NAME, detail: e.label, start: e.start, duration: e.duration, call: e.call, thread: e.thread })),
  ];
}

export interface TimelineOptions {
  /** Only this call's events (0-based, as TraceEvent.call); all kept events when omitted. */
  readonly call?: number;
  /** Width of the picture in pixels (default 960). */
  readonly width?: number;
}

/** Categorical colours (Tableau 10), then hues around the wheel for further ops. */
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function colourOf(k: number): string {
  if (k < PALETTE.length) return PALETTE[k]!;
  // The golden angle keeps successive hues apart however many there are.
  return `hsl(${Math.round((k * 137.508) % 360)}, 55%, 55%)`;
}

/** Text for XML content and attribute values. */
function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function shorten(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A tick step of 1, 2 or 5 times a power of ten that gives about `target` ticks over `span`. */
function tickStep(span: number, target: number): number {
  const raw = span / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  const m = raw / power;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * power;
}

function msLabel(ms: number, step: number): string {
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  return `${ms.toFixed(digits)} ms`;
}

/** Coordinates with two decimals: enough for pixels, short in the file. */
const px = (v: number): string => String(Math.round(v * 100) / 100);

/** The intervals of [from, to] that none of `busy` (sorted by start) covers. */
function gaps(busy: ReadonlyArray<readonly [number, number]>, from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let at = from;
  for (const [a, b] of busy) {
    if (a > at) out.push([at, Math.min(a, to)]);
    at = Math.max(at, b);
    if (at >= to) break;
  }
  if (at < to) out.push([at, to]);
  return out.filter(([a, b]) => b > a);
}

/**
 * The timeline as an SVG document. Lanes: `<g class="lane">` (the calling thread first, then
 * workers by thread id); bars: `<rect class="task">` with a `<title>` naming the node (copy tasks:
 * `<rect class="task copy">`, named by the copy); waits: `<rect class="wait">`; legend entries:
 * `<g class="legend-entry">`.
 */
export function timelineSvg(name: string, allEvents: readonly TraceEvent[], options: TimelineOptions = {}, allCopies: readonly CopyEvent[] = []): string {
  const width = options.width ?? 960;
  if (!(Number.isFinite(width) && width >= 200)) throw new RangeError(`toSvgTimeline: width must be a number of pixels >= 200, got ${width}`);
  if (options.call !== undefined && !(Number.isInteger(options.call) && options.call >= 0)) {
    throw new RangeError(`toSvgTimeline: call must be a call's 0-based index, got ${options.call}`);
  }
  const everyBar = barsOf(allEvents, allCopies);
  const events = options.call === undefined ? everyBar : everyBar.filter((e) => e.call === options.call);
  const threads = [0, ...[...new Set(events.map((e) => e.thread))].filter((t) => t !== 0).sort((a, b) => a - b)];
  const laneOf = new Map(threads.map((t, i) => [t, i]));
  // Ops by total time, slowest first: the legend's order and the colours' order.
  const opTime = new Map<string, number>();
  for (const e of events) opTime.set(e.name, (opTime.get(e.name) ?? 0) + e.duration);
  const ops = [...opTime.entries()].sort((a, b) => b[1] - a[1]).map(([op]) => op);
  const colour = new Map(ops.map((op, k) => [op, colourOf(k)]));

  // A loop, not Math.min(...): a profile keeps up to 100k events, past the arguments' limit.
  let start = Infinity;
  let end = -Infinity;
  for (const e of events) {
    start = Math.min(start, e.start);
    end = Math.max(end, e.start + e.duration);
  }
  if (events.length === 0) [start, end] = [0, 1];
  const span = end > start ? end - start : 1;
  const left = 130;
  const right = 20;
  const plot = width - left - right;
  const laneHeight = 26;
  const top = 34;
  const lanesBottom = top + threads.length * laneHeight;
  const x = (t: number): number => left + ((t - start) / span) * plot;

  const out: string[] = [];
  const title = `${name}: ${events.length} task${events.length === 1 ? '' : 's'}${options.call === undefined ? '' : ` of call ${options.call}`} on ${threads.length} thread${threads.length === 1 ? '' : 's'}, ${span.toFixed(3)} ms`;
  out.push(`<text class="title" x="${left}" y="20" font-size="13">${xmlEscape(title)}</text>`);

  // Calls as faint bands behind the lanes; inside each, a thread without a task waits.
  const calls = new Map<number, [number, number]>();
  for (const e of events) {
    const c = calls.get(e.call);
    calls.set(e.call, c ? [Math.min(c[0], e.start), Math.max(c[1], e.start + e.duration)] : [e.start, e.start + e.duration]);
  }
  for (const [call, [a, b]] of calls) {
    out.push(`<rect class="call" x="${px(x(a))}" y="${top}" width="${px(Math.max(0.5, x(b) - x(a)))}" height="${threads.length * laneHeight}" fill="#f4f6f8"><title>call ${call}: ${(b - a).toFixed(3)} ms</title></rect>`);
  }

  threads.forEach((thread, i) => {
    const y = top + i * laneHeight;
    const label = thread === 0 ? 'calling thread' : `worker ${i} (thread ${thread})`;
    const mine = events.filter((e) => laneOf.get(e.thread) === i);
    const spans: string[] = [];
    let waited = 0;
    for (const [call, [a, b]] of calls) {
      const busy = mine
        .filter((e) => e.call === call)
        .map((e) => [e.start, e.start + e.duration] as const)
        .sort((p, q) => p[0] - q[0]);
      for (const [g0, g1] of gaps(busy, a, b)) {
        waited += g1 - g0;
        // Gaps under a pixel (the hand-over from one task to the next) would be invisible
        // clutter; the lane's title counts them in its total.
        if (x(g1) - x(g0) < 1) continue;
        spans.push(`<rect class="wait" x="${px(x(g0))}" y="${px(y + laneHeight / 2 - 2)}" width="${px(x(g1) - x(g0))}" height="4" fill="url(#wait)"><title>waiting ${(g1 - g0).toFixed(3)} ms in call ${call}</title></rect>`);
      }
    }
    const busyTime = mine.reduce((sum, e) => sum + e.duration, 0);
    const summary = `${label}: ${mine.length} tasks, ${busyTime.toFixed(3)} ms in tasks, ${waited.toFixed(3)} ms waiting inside calls`;
    const lane = [`<g class="lane" data-thread="${thread}">`, `<text x="${left - 8}" y="${px(y + laneHeight / 2 + 4)}" font-size="11" text-anchor="end">${xmlEscape(label)}<title>${xmlEscape(summary)}</title></text>`];
    lane.push(`<line x1="${left}" x2="${left + plot}" y1="${px(y + laneHeight)}" y2="${px(y + laneHeight)}" stroke="#dee2e6"/>`, ...spans);
    for (const e of mine) {
      const op = e.name;
      const tip = `${op}\n${e.detail}\ncall ${e.call}: ${(e.start - start).toFixed(3)} ms + ${e.duration.toFixed(3)} ms`;
      lane.push(
        `<rect class="${op === COPIES_NAME ? 'task copy' : 'task'}" x="${px(x(e.start))}" y="${px(y + 4)}" width="${px(Math.max(0.5, x(e.start + e.duration) - x(e.start)))}" height="${laneHeight - 8}" fill="${colour.get(op)}" stroke="white" stroke-width="0.5"><title>${xmlEscape(tip)}</title></rect>`,
      );
    }
    lane.push('</g>');
    out.push(lane.join(''));
  });

  // The time axis: ticks at a round step, labelled in milliseconds from the first task.
  const step = tickStep(span, Math.max(2, Math.floor(plot / 90)));
  const axis = [`<g class="axis">`, `<line x1="${left}" x2="${left + plot}" y1="${lanesBottom}" y2="${lanesBottom}" stroke="#495057"/>`];
  for (let k = 0; k * step <= span * (1 + 1e-9); k++) {
    const tx = x(start + k * step);
    axis.push(`<line class="tick" x1="${px(tx)}" x2="${px(tx)}" y1="${lanesBottom}" y2="${lanesBottom + 5}" stroke="#495057"/>`);
    axis.push(`<text x="${px(tx)}" y="${lanesBottom + 17}" font-size="10" text-anchor="middle">${msLabel(k * step, step)}</text>`);
  }
  axis.push('</g>');
  out.push(axis.join(''));

  // The legend: a swatch per op, in rows; then what a wait looks like.
  const legendTop = lanesBottom + 32;
  const columnWidth = 300;
  const perRow = Math.max(1, Math.floor((width - 20) / columnWidth));
  const entries = [...ops.map((op) => ({ op, fill: colour.get(op)! })), { op: 'waiting (no task on this thread)', fill: 'url(#wait)' }];
  entries.forEach(({ op, fill }, k) => {
    const ex = 10 + (k % perRow) * columnWidth;
    const ey = legendTop + Math.floor(k / perRow) * 18;
    const kind = k < ops.length ? 'legend-entry' : 'legend-wait';
    out.push(`<g class="${kind}"><rect x="${ex}" y="${ey}" width="12" height="12" fill="${fill}"/><text x="${ex + 18}" y="${ey + 10}" font-size="11">${xmlEscape(shorten(op, 44))}<title>${xmlEscape(op)}</title></text></g>`);
  });
  const height = legendTop + Math.ceil(entries.length / perRow) * 18 + 8;

  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<defs><pattern id="wait" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="4" height="4" fill="#e9ecef"/><line x1="0" y1="0" x2="0" y2="4" stroke="#868e96" stroke-width="1.5"/></pattern></defs>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}
