// The examples run as a user runs them (tsx), briefly: examples/classifier.ts trains for three
// epochs, its loss must fall and it must pass 80% held-out accuracy; the others train a few dozen
// steps and their loss must fall (to under 70% of the first, or as each one's check says).
import { execFileSync } from 'node:child_process';
import t, { type Test } from 'tap';

function run(example: string, ...args: string[]): string {
  return execFileSync(process.execPath, ['--import=tsx', `examples/${example}`, ...args], { encoding: 'utf8', timeout: 120_000, cwd: new URL('..', import.meta.url) });
}

/** The example's summary line `loss A -> B over N steps`: the two losses. */
function lossFell(t: Test, out: string, steps: number, fraction: number): void {
  const m = new RegExp(`loss ([\\d.]+) -> ([\\d.]+) over ${steps} steps`).exec(out);
  t.ok(m, 'its summary line');
  t.ok(Number(m![2]) < fraction * Number(m![1]), `the loss fell: ${m![1]} -> ${m![2]}`);
}

t.test('examples/classifier.ts learns (3 epochs)', async (t) => {
  const out = run('classifier.ts', '3');
  const epochs = [...out.matchAll(/epoch (\d): mean loss ([\d.]+), held-out accuracy ([\d.]+) %/g)];
  t.equal(epochs.length, 3, 'a line per epoch');
  t.ok(Number(epochs[2]![2]) < Number(epochs[0]![2]), `the mean loss fell: ${epochs[0]![2]} -> ${epochs[2]![2]}`);
  t.ok(Number(epochs[2]![3]) > 80, `held-out accuracy ${epochs[2]![3]} %`);
});

t.test('examples/cnn.ts learns (30 steps)', async (t) => {
  lossFell(t, run('cnn.ts', '30'), 30, 0.7);
});

t.test('examples/logistic-regression.ts learns (40 steps)', async (t) => {
  const out = run('logistic-regression.ts', '40');
  lossFell(t, out, 40, 0.7);
  const accuracy = /training accuracy ([\d.]+) %/.exec(out);
  t.ok(accuracy && Number(accuracy[1]) > 85, `training accuracy ${accuracy?.[1]} %`);
});

t.test('examples/rnn.ts learns through scan (30 steps)', async (t) => {
  lossFell(t, run('rnn.ts', '30'), 30, 0.5);
});

t.test('examples/custom-op.ts: its kernel matches the formula, runs on the workers, and the network learns (30 steps)', async (t) => {
  const out = run('custom-op.ts', '30');
  t.match(out, /softsign kernel vs x \/ \(1 \+ \|x\|\) on 65536 values: largest difference 0\n/);
  const tasks = /Softsign ran as (\d+) tasks over 30 calls, (\d+) of them on worker threads/.exec(out);
  t.ok(tasks && Number(tasks[2]) > 0, `tasks on worker threads: ${tasks?.[2]} of ${tasks?.[1]}`);
  lossFell(t, out, 30, 0.7);
});

t.test('examples/op-from-graph.ts: two blocks in the compiled graph, and it learns (40 steps)', async (t) => {
  const out = run('op-from-graph.ts', '40');
  t.match(out, /blocks in the compiled graph: 2 x OpFromGraph\{dense\}, 2 x OpFromGraph\{dense\.grad\}/);
  lossFell(t, out, 40, 0.7);
});

t.test('examples/sparse-logreg.ts learns on a sparse bag of words (30 epochs)', async (t) => {
  const out = run('sparse-logreg.ts', '30');
  t.match(out, /2000 documents x 5000 words, 100000 stored entries \(1\.0 %\)/, 'a 1% dense CSR matrix');
  lossFell(t, out, 30, 0.7);
  const accuracy = /training accuracy ([\d.]+) %/.exec(out);
  t.ok(accuracy && Number(accuracy[1]) > 85, `training accuracy ${accuracy?.[1]} %`);
});
