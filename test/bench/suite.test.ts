// The bench suite's measurement (bench/lib/suite.ts): warm-up calls by count, and by time for rows
// that ask for it (warmupMs, capped by the mode's budget), before the timed runs; the row records
// how many warm-ups ran and every timed sample. Rows timed in turns with the peers their goals
// name (measureAlongside): the order of turns, what a failure leaves, and each turn's share.
import t from 'tap';
import { Suite, type Counts, type Goal } from '../../bench/lib/suite.js';

const COUNTS: Counts = { warmup: 2, runs: 3, minRuns: 3, budgetMs: 200 };

/** A runner that takes about `ms` a run and counts its runs. */
function sleeper(ms: number): { runs: () => number; run: () => Promise<number> } {
  let runs = 0;
  return {
    runs: () => runs,
    run: async () => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, ms));
      return runs;
    },
  };
}

t.test('warm-ups by count: the checked run and one more, then the timed runs', async (t) => {
  const suite = new Suite(true, COUNTS, () => undefined);
  const r = sleeper(1);
  await suite.measure({ group: 'G', system: 's', config: 'c', unit: 'ms', figure: (ms) => ms, setup: async () => ({ run: r.run }) });
  const row = suite.rows[0]!;
  t.equal(row.status, 'ok');
  t.equal(row.warmup, 2);
  t.equal(row.samplesMs!.length, 3);
  t.equal(r.runs(), 5, '2 warm-ups and 3 timed runs');
});

t.test('warm-ups by time: they go on until warmupMs has passed', async (t) => {
  const suite = new Suite(true, COUNTS, () => undefined);
  const r = sleeper(5);
  const started = performance.now();
  await suite.measure({ group: 'G', system: 's', config: 'c', unit: 'ms', figure: (ms) => ms, warmupMs: 100, setup: async () => ({ run: r.run }) });
  const row = suite.rows[0]!;
  t.ok(row.warmup! >= 10, `at least 100 ms of 5 ms warm-ups (${row.warmup})`);
  t.equal(r.runs(), row.warmup! + 3, 'then the timed runs');
  t.ok(performance.now() - started >= 100);
});

t.test('warmupMs is capped by the mode\'s time budget', async (t) => {
  const suite = new Suite(true, { ...COUNTS, budgetMs: 30 }, () => undefined);
  const r = sleeper(5);
  const started = performance.now();
  await suite.measure({ group: 'G', system: 's', config: 'c', unit: 'ms', figure: (ms) => ms, warmupMs: 60_000, setup: async () => ({ run: r.run }) });
  t.ok(suite.rows[0]!.warmup! < 40, `warm-ups stop near 30 ms (${suite.rows[0]!.warmup})`);
  t.ok(performance.now() - started < 5000);
});

/** A system that appends its name to `log` at every run, with goals naming `vs`. */
function logged(log: string[], name: string, vs: readonly string[] = []) {
  return {
    group: 'G', system: name, config: 'c', unit: 'ms' as const, figure: (ms: number) => ms,
    goals: vs.map((v) => ({ kind: 'speedup' as const, label: `vs ${v}`, vs: { group: 'G', system: v, config: 'c' }, atLeast: 1 })),
    setup: async () => ({ run: async () => { log.push(name); } }),
  };
}

/** Runs of the same system in a row as `name×n`. */
function runsOf(log: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < log.length; ) {
    let j = i;
    while (j < log.length && log[j] === log[i]) j++;
    out.push(`${log[i]}×${j - i}`);
    i = j;
  }
  return out;
}

/** Counts under which a turn is one untimed and one timed run (a zero budget: one run at least). */
const TURNS: Counts = { ...COUNTS, budgetMs: 0 };

t.test('rows alongside peers: each row in turns with the peers its goals name, the order rotating by round', async (t) => {
  const suite = new Suite(true, TURNS, () => undefined);
  const log: string[] = [];
  await suite.measureAlongside(
    [logged(log, 'a', ['p']), logged(log, 'b', ['p', 'q']), logged(log, 'c')],
    [logged(log, 'p'), logged(log, 'q'), logged(log, 'r')],
  );
  t.same(runsOf(log), [
    'p×2', 'q×2', 'r×2', // the peers' checked run and warm-up, once
    // a, set up and warmed up, then minRuns rounds of turns with p, a turn being a run not timed
    // and a timed one: rounds a p, p a, a p (a turn at a round's end and the next one's start meet)
    'a×4', 'p×4', 'a×4', 'p×2',
    'b×4', 'p×2', 'q×2', 'p×2', 'q×2', 'b×2', 'q×2', 'b×2', 'p×2', // b with p and q; rows never with each other
    'c×5', // c's goals name no peer: timed alone
    'r×3', // nor does any goal name r
  ]);
  t.same(suite.rows.map((r) => r.system), ['a', 'b', 'c', 'p', 'q', 'r'], 'rows in the order given, then the peers');
  t.same(suite.rows.map((r) => r.samplesMs!.length), [3, 3, 3, 6, 3, 3], "a peer's figure is the median of its runs in all its turns");
  t.equal(suite.rows[1]!.note, 'timed in turns with p c, q c');
  t.equal(suite.rows[2]!.note, undefined);
  t.equal(suite.rows[3]!.note, 'timed in turns with each of 2 rows whose goals name it');
  t.equal(suite.rows[5]!.note, undefined);
});

t.test('rows alongside peers: a peer that cannot start, wrong numbers and a failing run leave the others timed', async (t) => {
  const suite = new Suite(true, TURNS, () => undefined);
  let runs = 0;
  const peer = { group: 'G', system: 'peer', config: 'p', unit: 'ms' as const, figure: (ms: number) => ms, setup: async () => ({ run: async () => 0 }) };
  const goals = [{ kind: 'speedup' as const, label: 'vs peer', vs: peer, atLeast: 1 }];
  const ok = { group: 'G', system: 'weft', config: 'ok', unit: 'ms' as const, figure: (ms: number) => ms, goals, setup: async () => ({ run: async () => ++runs }) };
  await suite.measureAlongside(
    [
      ok,
      { ...ok, config: 'wrong', setup: async () => ({ run: () => 1 }), check: (first: number) => ({ ok: first === 2, worst: Math.abs(first - 2), detail: `got ${first}` }) },
      { ...ok, config: 'breaks', setup: async () => { let n = 0; return { run: () => { if (++n === 4) throw new Error('lost a worker'); return n; } }; } },
    ],
    [peer, { ...peer, config: 'no start', setup: async () => { throw new Error('no such backend'); } }],
  );
  t.same(suite.rows.map((r) => [r.config, r.status]), [['ok', 'ok'], ['wrong', 'mismatch'], ['breaks', 'failed'], ['p', 'ok'], ['no start', 'skipped']]);
  t.match(suite.rows[1]!.note, /wrong numbers, not timed: got 1/);
  t.match(suite.rows[2]!.note, /failed: lost a worker/);
  t.match(suite.rows[4]!.note, /cannot run here: no such backend/);
  t.equal(suite.rows[0]!.samplesMs!.length, 3, 'the working row has its runs');
  t.equal(runs, 2 + 3 * 2, 'checked, warmed up, then 3 turns of an untimed and a timed run');
  t.equal(suite.rows[3]!.samplesMs!.length, 3 + 3, 'the peer went on taking turns after the row that broke stopped');
});

t.test('rows alongside peers: a turn stops at its share of the budget, after one timed run at least', async (t) => {
  const suite = new Suite(true, { warmup: 1, runs: 50, minRuns: 2, budgetMs: 40 }, () => undefined);
  const a = sleeper(10);
  const b = sleeper(30);
  const of = (name: string, r: ReturnType<typeof sleeper>, goals?: Goal[]) => ({ group: 'G', system: name, config: 'c', unit: 'ms' as const, figure: (ms: number) => ms, goals, setup: async () => ({ run: r.run }) });
  await suite.measureAlongside([of('a', a, [{ kind: 'speedup', label: 'vs b', vs: { group: 'G', system: 'b', config: 'c' }, atLeast: 1 }])], [of('b', b)]);
  const [ra, rb] = suite.rows;
  t.ok(ra!.samplesMs!.length >= 2 && ra!.samplesMs!.length <= 8, `a: 2 turns of 20 ms, 10 ms a run (${ra!.samplesMs!.length} runs)`);
  t.equal(rb!.samplesMs!.length, 2, 'b: one timed run a turn, each over the share');
});

t.test('rows alongside peers: a peer asking for fewer runs sits out the later rounds; a failed peer is not named', async (t) => {
  const suite = new Suite(true, TURNS, () => undefined);
  const log: string[] = [];
  const slow = { ...logged(log, 'slow'), counts: { minRuns: 1 } };
  let n = 0;
  const broken = { ...logged(log, 'broken'), setup: async () => ({ run: () => { if (++n === 3) throw new Error('gone'); } }) };
  await suite.measureAlongside([logged(log, 'a', ['slow', 'broken']), logged(log, 'b', ['broken'])], [slow, broken]);
  t.same(runsOf(log), ['slow×2', 'a×4', 'slow×2', 'a×4', 'b×5'], 'slow takes one turn; broken fails in its first (it logs nothing)');
  t.same(suite.rows.map((r) => [r.system, r.status, r.samplesMs?.length]), [['a', 'ok', 3], ['b', 'ok', 3], ['slow', 'ok', 1], ['broken', 'failed', undefined]]);
  t.equal(suite.rows[1]!.note, undefined, 'b named only the broken peer: timed alone');
});
