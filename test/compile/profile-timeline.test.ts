// fn.profile.toSvgTimeline(), read back as XML: for real profiled calls on a 2-worker pool, a lane
// for the calling thread and one per worker, one bar per trace event (and per copy task of a large
// argument) in the lane of its thread,
// bars and waits that fill each lane across the call, a time axis from 0 ms; one lane for calls
// on the calling thread; escaped names; clear errors for bad options.
import t from 'tap';
import { COPIES_NAME } from '../../src/compile/profile-timeline.js';
import { pt, weft } from '../helpers.js';
import { findAll, hasClass, parseSvg, textOf, type XmlElement } from '../svg-xml.js';

const byClass = (root: XmlElement, tag: string, name: string): XmlElement[] => findAll(root, (e) => e.tag === tag && hasClass(e, name));
const num = (e: XmlElement, attribute: string): number => Number(e.attributes[attribute]);

/** A graph of large element-wise chains and a matrix product: chunked into tasks that both workers take. */
async function profiledOnTwoWorkers(pool: weft.Pool): Promise<weft.FunctionProfile> {
  const x = pt.vector('x');
  const y = pt.vector('y');
  const w = pt.matrix('w');
  const fn = await weft.compile([x, y, w], [x.exp().mul(y).add(pt.tanh(x)).sum(), w.dot(w).sum()], { pool, profile: true, name: 'two lanes' });
  const n = 1 << 20;
  const values = [new Float64Array(n).fill(0.5), new Float64Array(n).fill(2), weft.ndarray(new Float64Array(192 * 192).fill(0.01), [192, 192])] as const;
  for (let k = 0; k < 3; k++) await fn(...values);
  return fn.profile;
}

t.test('a 2-worker pool: three lanes, a bar per task event in its thread\'s lane, waits that fill the gaps', async (t) => {
  const pool = weft.createPool({ workers: 2 });
  t.teardown(() => pool.close());
  const profile = await profiledOnTwoWorkers(pool);
  // Every bar's task: the nodes' and the copies of the 8 MiB arguments (named as one legend entry).
  const events = [
    ...profile.events.map((e) => ({ thread: e.thread, call: e.call, name: String(e.node.op) })),
    ...profile.copies.map((e) => ({ thread: e.thread, call: e.call, name: COPIES_NAME })),
  ];
  const workerThreads = [...new Set(events.map((e) => e.thread))].filter((th) => th !== 0).sort((a, b) => a - b);
  t.equal(workerThreads.length, 2, 'both workers ran tasks');
  t.ok(profile.copies.length > 0 && profile.copies.every((c) => c.thread === 0), 'the arguments were copied by calling-thread tasks');

  const root = parseSvg(t, profile.toSvgTimeline());
  const lanes = byClass(root, 'g', 'lane');
  t.equal(lanes.length, 2 + 1, 'workers + 1 lanes');
  t.same(lanes.map((l) => Number(l.attributes['data-thread'])), [0, ...workerThreads], 'the calling thread first, then workers by thread id');
  t.same(lanes.map((l) => l.children.find((c) => c.tag === 'text')!.text), ['calling thread', `worker 1 (thread ${workerThreads[0]})`, `worker 2 (thread ${workerThreads[1]})`]);
  const bars = byClass(root, 'rect', 'task');
  t.equal(bars.length, events.length, 'one bar per trace event');
  lanes.forEach((lane) => {
    const thread = Number(lane.attributes['data-thread']);
    t.equal(byClass(lane, 'rect', 'task').length, events.filter((e) => e.thread === thread).length, `thread ${thread}: its events' bars`);
  });
  const opsNamed = new Set(bars.map((b) => textOf(b.children.find((c) => c.tag === 'title')!).split('\n')[0]));
  t.same([...opsNamed].sort(), [...new Set(events.map((e) => e.name))].sort(), 'each bar names its op (or says it is a copy)');
  t.equal(byClass(root, 'rect', 'copy').length, profile.copies.length, 'copy bars are marked as such');

  // One call alone: in every lane, bars and waits together span the call's band.
  const one = parseSvg(t, profile.toSvgTimeline({ call: 2 }));
  const band = byClass(one, 'rect', 'call');
  t.equal(band.length, 1, 'one call band');
  t.equal(byClass(one, 'rect', 'task').length, events.filter((e) => e.call === 2).length, 'the bars of call 2');
  const bandWidth = num(band[0]!, 'width');
  for (const lane of byClass(one, 'g', 'lane')) {
    const tasks = byClass(lane, 'rect', 'task');
    const covered = [...tasks, ...byClass(lane, 'rect', 'wait')].reduce((s, r) => s + num(r, 'width'), 0);
    // A bar is at least half a pixel wide, a gap under a pixel is not drawn (one before, between
    // and after the bars at most), and widths are rounded to a hundredth: that much slack.
    const slack = 0.5 * tasks.length + (tasks.length + 1) + 0.01 * (2 * tasks.length + 1);
    t.ok(Math.abs(covered - bandWidth) <= slack, `thread ${lane.attributes['data-thread']}: ${covered.toFixed(2)} px of ${bandWidth.toFixed(2)}`);
    t.match(textOf(lane), /\d+ tasks, [\d.]+ ms in tasks, [\d.]+ ms waiting inside calls/, 'the lane\'s title sums its time');
  }
  t.ok(byClass(byClass(one, 'g', 'lane')[0]!, 'rect', 'wait').length >= 1, 'the calling thread waits while the workers run');

  const ticks = findAll(byClass(one, 'g', 'axis')[0]!, (e) => e.tag === 'text').map(textOf);
  t.ok(ticks.length >= 3, `${ticks.length} tick labels`);
  t.equal(ticks[0], '0 ms');
  const values = ticks.map((s) => Number(s.replace(' ms', '')));
  t.ok(values.every((v, i) => i === 0 || v > values[i - 1]!), `ticks increase: ${ticks.join(', ')}`);
  const legend = byClass(one, 'g', 'legend-entry').map(textOf);
  t.equal(legend.length, new Set(events.filter((e) => e.call === 2).map((e) => e.name)).size, 'a legend entry per op, and one for the copies');
});

t.test('a call on the calling thread: one lane; names are escaped; bad options are named', async (t) => {
  const x = pt.vector('x');
  const fn = await weft.compile([x], pt.exp(x).sum(), { workers: 0, profile: true, name: 'a <b> & "c"' });
  await fn([1, 2, 3]);
  const root = parseSvg(t, fn.profile!.toSvgTimeline());
  t.equal(byClass(root, 'g', 'lane').length, 1);
  t.equal(byClass(root, 'rect', 'task').length, fn.profile!.events.length);
  t.ok(fn.profile!.events.length >= 1);
  t.match(textOf(byClass(root, 'text', 'title')[0]!), /^a <b> & "c": \d+ tasks? on 1 thread/);
  t.throws(() => fn.profile!.toSvgTimeline({ call: -1 }), { name: 'RangeError', message: "toSvgTimeline: call must be a call's 0-based index, got -1" });
  t.throws(() => fn.profile!.toSvgTimeline({ width: 10 }), { name: 'RangeError', message: 'toSvgTimeline: width must be a number of pixels >= 200, got 10' });
  const empty = parseSvg(t, fn.profile!.toSvgTimeline({ call: 5 }));
  t.equal(byClass(empty, 'rect', 'task').length, 0, 'a call with no events: no bars');
});
