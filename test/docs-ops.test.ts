// docs/ops.md lists the functions of weft.pt: every name in its tables is a function of weft.pt
// (`special.gamma` one of the namespace pt.special), and every function of weft.pt and of its
// namespaces (but the classes its last section names) is in a table, once.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { pt } from './helpers.js';

const page = readFileSync(new URL('../docs/ops.md', import.meta.url), 'utf8');

t.test('docs/ops.md names every function of weft.pt, once, and nothing else', async (t) => {
  const listed = page.split('\n').filter((l) => l.startsWith('| `')).flatMap((l) => [...l.split(' | ')[0]!.matchAll(/`([\w.]+)`/g)].map((m) => m[1]!));
  const classes = [...page.slice(page.indexOf('## Classes')).matchAll(/`(\w+)`/g)].map((m) => m[1]!);
  const entries = Object.entries(pt as unknown as Record<string, unknown>);
  const namespaces = entries.filter(([, v]) => typeof v === 'object' && v !== null) as Array<[string, Record<string, unknown>]>;
  const functions = [
    ...entries.filter(([k, v]) => typeof v === 'function' && !classes.includes(k)).map(([k]) => k),
    ...namespaces.flatMap(([ns, o]) => Object.keys(o).filter((k) => typeof o[k] === 'function').map((k) => `${ns}.${k}`)),
  ];
  t.ok(namespaces.some(([ns]) => ns === 'special'), 'pt.special is a namespace');
  t.same(listed.filter((n) => !functions.includes(n)), [], 'no name the page lists is missing from weft.pt');
  t.same(functions.filter((n) => !listed.includes(n)), [], 'no function of weft.pt is missing from the page');
  t.same(listed.filter((n, i) => listed.indexOf(n) !== i), [], 'each listed once');
  t.ok(classes.length > 0 && classes.every((c) => typeof (pt as unknown as Record<string, unknown>)[c] === 'function'), 'the classes exist');
});
