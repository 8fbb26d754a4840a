// Generated element-wise loops. An element-wise computation is given as JS source: statements
// and one result expression per output over the inputs x0, x1, ... (helpers as L.name). Loops
// are compiled once per source and access pattern, and cached: a contiguous fast path (inputs
// contiguous or broadcast scalars) and a general strided path with broadcasting (stride 0).
import { scalarLib } from './scalar-lib.js';
import { isContiguous, sizeOf, type Range, type TensorView } from './view.js';

export interface ElemwiseSource {
  readonly nin: number;
  /** Statements run per element before the results (may declare temporaries). */
  readonly body: string;
  /** One JS expression per output. */
  readonly results: readonly string[];
}

type Loop = (ins: readonly TensorView[], outs: readonly TensorView[], start: number, end: number) => void;

const loops = new Map<string, Loop>();

function sourceKey(src: ElemwiseSource): string {
  return `${src.nin}|${src.body}|${src.results.join('|')}`;
}

function compile(key: string, code: string): Loop {
  let loop = loops.get(key);
  if (!loop) {
    loop = new Function('L', code)(scalarLib) as Loop;
    loops.set(key, loop);
  }
  return loop;
}

/** Per input: 'c' contiguous with the output's shape, 's' one value broadcast everywhere. */
function fastPattern(ins: readonly TensorView[], outs: readonly TensorView[]): string | undefined {
  for (const o of outs) if (!isContiguous(o)) return undefined;
  const shape = outs[0]!.shape;
  let pattern = '';
  for (const v of ins) {
    if (v.stride.every((s, i) => s === 0 || shape[i] === 1)) pattern += 's';
    else if (v.shape.length === shape.length && v.shape.every((d, i) => d === shape[i]) && isContiguous(v)) pattern += 'c';
    else return undefined;
  }
  return pattern;
}

function fastLoopCode(src: ElemwiseSource, pattern: string, nout: number): string {
  const lines: string[] = ['return function fast(ins, outs, start, end) {'];
  for (let k = 0; k < nout; k++) lines.push(`  const od${k} = outs[${k}].data, oo${k} = outs[${k}].offset;`);
  for (let k = 0; k < src.nin; k++) {
    if (pattern[k] === 's') lines.push(`  const x${k} = ins[${k}].data[ins[${k}].offset];`);
    else lines.push(`  const d${k} = ins[${k}].data, p${k} = ins[${k}].offset;`);
  }
  lines.push('  for (let i = start; i < end; i++) {');
  for (let k = 0; k < src.nin; k++) if (pattern[k] === 'c') lines.push(`    const x${k} = d${k}[p${k} + i];`);
  if (src.body) lines.push(`    ${src.body}`);
  src.results.forEach((r, k) => lines.push(`    od${k}[oo${k} + i] = ${r};`));
  lines.push('  }', '};');
  return lines.join('\n');
}

function generalLoopCode(src: ElemwiseSource, nout: number): string {
  const ins = [...Array(src.nin).keys()];
  const outs = [...Array(nout).keys()];
  const all = [...ins.map((k) => ({ p: `p${k}`, s: `s${k}`, t: `t${k}` })), ...outs.map((k) => ({ p: `q${k}`, s: `os${k}`, t: `u${k}` }))];
  const lines: string[] = [
    'return function general(ins, outs, start, end) {',
    '  const shape = outs[0].shape, nd = shape.length;',
  ];
  for (const k of ins) lines.push(`  const d${k} = ins[${k}].data, s${k} = ins[${k}].stride; let p${k} = ins[${k}].offset;`);
  for (const k of outs) lines.push(`  const od${k} = outs[${k}].data, os${k} = outs[${k}].stride; let q${k} = outs[${k}].offset;`);
  lines.push('  if (nd === 0) {');
  for (const k of ins) lines.push(`    const x${k} = d${k}[p${k}];`);
  if (src.body) lines.push(`    ${src.body}`);
  src.results.forEach((r, k) => lines.push(`    od${k}[q${k}] = ${r};`));
  lines.push('    return;', '  }');
  lines.push('  const idx = new Array(nd); let rem = start;');
  lines.push('  for (let a = nd - 1; a >= 0; a--) {', '    const i = rem % shape[a]; rem = (rem - i) / shape[a]; idx[a] = i;');
  for (const v of all) lines.push(`    ${v.p} += i * ${v.s}[a];`);
  lines.push('  }');
  lines.push('  const last = nd - 1, n = shape[last];');
  for (const v of all) lines.push(`  const ${v.t} = ${v.s}[last];`);
  lines.push('  let i = start;', '  while (i < end) {', '    const run = Math.min(n - idx[last], end - i);');
  lines.push('    for (let j = 0; j < run; j++) {');
  for (const k of ins) lines.push(`      const x${k} = d${k}[p${k}];`);
  if (src.body) lines.push(`      ${src.body}`);
  src.results.forEach((r, k) => lines.push(`      od${k}[q${k}] = ${r};`));
  lines.push(`      ${all.map((v) => `${v.p} += ${v.t};`).join(' ')}`);
  lines.push('    }', '    i += run;', '    if (i >= end) break;');
  lines.push(`    ${all.map((v) => `${v.p} -= n * ${v.t};`).join(' ')}`);
  lines.push('    idx[last] = 0;');
  lines.push('    for (let a = last - 1; a >= 0; a--) {');
  lines.push(`      idx[a]++; ${all.map((v) => `${v.p} += ${v.s}[a];`).join(' ')}`);
  lines.push('      if (idx[a] < shape[a]) break;');
  lines.push(`      idx[a] = 0; ${all.map((v) => `${v.p} -= shape[a] * ${v.s}[a];`).join(' ')}`);
  lines.push('    }', '  }', '};');
  return lines.join('\n');
}

/**
 * Runs an element-wise computation over the flat output elements in `range` (all by default).
 * Inputs are views already broadcast to the output's shape (stride 0 on broadcast axes); all
 * outputs have the same shape.
 */
export function runElemwise(src: ElemwiseSource, ins: readonly TensorView[], outs: readonly TensorView[], range?: Range): void {
  if (ins.length !== src.nin) throw new Error(`elemwise kernel: expected ${src.nin} inputs, got ${ins.length}`);
  const start = range?.start ?? 0;
  const end = range?.end ?? sizeOf(outs[0]!.shape);
  if (start >= end) return;
  const key = sourceKey(src);
  const pattern = outs[0]!.shape.length === 0 ? undefined : fastPattern(ins, outs);
  const loop =
    pattern === undefined
      ? compile(`g|${outs.length}|${key}`, generalLoopCode(src, outs.length))
      : compile(`f|${pattern}|${outs.length}|${key}`, fastLoopCode(src, pattern, outs.length));
  loop(ins, outs, start, end);
}
