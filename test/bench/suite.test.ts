// The bench suite's measurement (bench/lib/suite.ts): warm-up calls by count, and by time for rows
// that ask for it (warmupMs, capped by the mode's budget), before the timed runs; the row records
// how many warm-ups ran and every timed sample.
import t from 'tap';
import { Suite, type Counts } from '../../bench/lib/suite.js';

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
