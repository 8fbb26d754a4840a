// The examples run as a user runs them (tsx), briefly: examples/classifier.ts trains for three
// epochs and must pass 80% held-out accuracy; examples/cnn.ts trains 30 steps and its loss must fall.
import { execFileSync } from 'node:child_process';
import t from 'tap';

t.test('examples/classifier.ts learns (3 epochs)', async (t) => {
  const out = execFileSync(process.execPath, ['--import=tsx', 'examples/classifier.ts', '3'], { encoding: 'utf8', timeout: 120_000, cwd: new URL('..', import.meta.url) });
  const epochs = [...out.matchAll(/epoch (\d): mean loss ([\d.]+), held-out accuracy ([\d.]+) %/g)];
  t.equal(epochs.length, 3, 'a line per epoch');
  t.ok(Number(epochs[2]![3]) > 80, `held-out accuracy ${epochs[2]![3]} %`);
});

t.test('examples/cnn.ts learns (30 steps)', async (t) => {
  const out = execFileSync(process.execPath, ['--import=tsx', 'examples/cnn.ts', '30'], { encoding: 'utf8', timeout: 120_000, cwd: new URL('..', import.meta.url) });
  const m = /loss ([\d.]+) -> ([\d.]+) over 30 steps/.exec(out);
  t.ok(m, 'its summary line');
  t.ok(Number(m![2]) < 0.7 * Number(m![1]), `the loss fell: ${m![1]} -> ${m![2]}`);
});
