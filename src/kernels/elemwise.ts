// Generated element-wise loops. An element-wise computation is given as JS source: statements
// and one result expression per output over the inputs x0, x1, ... (helpers as L.name). Loops
// are compiled once per source and access pattern, and cached: a flat fast path (each input
// contiguous, a broadcast scalar, a block repeated along leading axes such as a bias row, or
// each element repeated along trailing axes) and a general strided path with broadcasting.
import type { ElemwiseProgram } from './elemwise-wasm.js';
import { scalarLib } from './scalar-lib.js';
import { isContiguous, sizeOf, type Range, type TensorView } from './view.js';

export interface ElemwiseSource {
  readonly nin: number;
  /**
   * The same computation as a WebAssembly program, when every step has an exact wasm form
   * (elemwise-wasm.ts): the kernel runs it where the layout allows, the JS loop elsewhere.
   */
  readonly program?: ElemwiseProgram;
  /** Statements run per element before the results (may declare temporaries). */
  readonly body: string;
  /** One JS expression per output. */
  readonly results: readonly string[];
}

/** `periods[k]`: the block length of input k when its access is 'r' or 'e' (see FlatAccess). */
type Loop = (ins: readonly TensorView[], outs: readonly TensorView[], start: number, end: number, periods: readonly number[]) => void;

/** Compiled loops by source text and pattern (the same source from any op shares them). */
const loops = new Map<string, Loop>();
/** The same, by source object: a kernel is given one object per plan, so the lookup is cheap. */
const bySource = new WeakMap<ElemwiseSource, Map<string, Loop>>();

function loopFor(src: ElemwiseSource, key: string, code: () => string): Loop {
  let mine = bySource.get(src);
  if (!mine) bySource.set(src, (mine = new Map()));
  let loop = mine.get(key);
  if (!loop) {
    const full = `${key}|${src.nin}|${src.body}|${src.results.join('|')}`;
    loop = loops.get(full);
    if (!loop) {
      loop = new Function('L', code())(scalarLib) as Loop;
      loops.set(full, loop);
    }
    mine.set(key, loop);
  }
  return loop;
}

/**
 * How an input is read at flat output index i on the fast path: 'c' contiguous (element i),
 * 's' one value everywhere, 'r' a block of P elements repeated along leading axes (element
 * i mod P: a bias row), 'e' each element repeated P times along trailing axes (element i / P).
 */
export type FlatAccess = 'c' | 's' | 'r' | 'e';

/** Whether `stride` over `shape` (axes from..to) is the row-major layout of those axes. */
function rowMajor(shape: readonly number[], stride: readonly number[], from: number, to: number): boolean {
  let step = 1;
  for (let a = to - 1; a >= from; a--) {
    if (shape[a] !== 1 && stride[a] !== step) return false;
    step *= shape[a]!;
  }
  return true;
}

function broadcastOver(shape: readonly number[], stride: readonly number[], from: number, to: number): boolean {
  for (let a = from; a < to; a++) if (shape[a] !== 1 && stride[a] !== 0) return false;
  return true;
}

function product(shape: readonly number[], from: number, to: number): number {
  let n = 1;
  for (let a = from; a < to; a++) n *= shape[a]!;
  return n;
}

/** The fast-path access of one input (already broadcast to `shape`), with its block length. */
export function flatAccess(v: TensorView, shape: readonly number[]): [FlatAccess, number] | undefined {
  const nd = shape.length;
  if (broadcastOver(shape, v.stride, 0, nd)) return ['s', 1];
  if (rowMajor(shape, v.stride, 0, nd)) return ['c', 1];
  for (let split = 1; split < nd; split++) {
    if (broadcastOver(shape, v.stride, 0, split) && rowMajor(shape, v.stride, split, nd)) return ['r', product(shape, split, nd)];
    if (rowMajor(shape, v.stride, 0, split) && broadcastOver(shape, v.stride, split, nd)) return ['e', product(shape, split, nd)];
  }
  return undefined;
}

/** The inputs' accesses as a string (one letter each) and their block lengths; none when an output is strided. */
function fastPattern(ins: readonly TensorView[], outs: readonly TensorView[]): { pattern: string; periods: number[] } | undefined {
  for (const o of outs) if (!isContiguous(o)) return undefined;
  const shape = outs[0]!.shape;
  let pattern = '';
  const periods: number[] = [];
  for (const v of ins) {
    const access = flatAccess(v, shape);
    if (!access) return undefined;
    pattern += access[0];
    periods.push(access[1]);
  }
  return { pattern, periods };
}

function fastLoopCode(src: ElemwiseSource, pattern: string, nout: number): string {
  const lines: string[] = ['return function fast(ins, outs, start, end, periods) {'];
  for (let k = 0; k < nout; k++) lines.push(`  const od${k} = outs[${k}].data, oo${k} = outs[${k}].offset;`);
  const step: string[] = [];
  for (let k = 0; k < src.nin; k++) {
    const access = pattern[k] as FlatAccess;
    if (access === 's') {
      lines.push(`  const x${k} = ins[${k}].data[ins[${k}].offset];`);
      continue;
    }
    lines.push(`  const d${k} = ins[${k}].data, p${k} = ins[${k}].offset;`);
    if (access === 'r') {
      // A counter that wraps, rather than i % P per element.
      lines.push(`  const P${k} = periods[${k}]; let j${k} = start % P${k};`);
      step.push(`if (++j${k} === P${k}) j${k} = 0;`);
    } else if (access === 'e') {
      lines.push(`  const P${k} = periods[${k}]; let j${k} = start % P${k}, e${k} = p${k} + (start - j${k}) / P${k};`);
      step.push(`if (++j${k} === P${k}) { j${k} = 0; e${k}++; }`);
    }
  }
  lines.push('  for (let i = start; i < end; i++) {');
  for (let k = 0; k < src.nin; k++) {
    const read = { c: `d${k}[p${k} + i]`, r: `d${k}[p${k} + j${k}]`, e: `d${k}[e${k}]`, s: undefined }[pattern[k] as FlatAccess];
    if (read) lines.push(`    const x${k} = ${read};`);
  }
  if (src.body) lines.push(`    ${src.body}`);
  src.results.forEach((r, k) => lines.push(`    od${k}[oo${k} + i] = ${r};`));
  if (step.length > 0) lines.push(`    ${step.join(' ')}`);
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
  const fast = outs[0]!.shape.length === 0 ? undefined : fastPattern(ins, outs);
  if (fast === undefined) loopFor(src, `g|${outs.length}`, () => generalLoopCode(src, outs.length))(ins, outs, start, end, []);
  else loopFor(src, `f|${fast.pattern}|${outs.length}`, () => fastLoopCode(src, fast.pattern, outs.length))(ins, outs, start, end, fast.periods);
}
