// Random graphs for the differential fuzzer. From a seed it builds a graph of tensor ops
// (elementwise chains with broadcasting, reductions, views, reshapes, slices with steps, split,
// join, dot/matmul, softmax, alloc, inc/set subtensor, casts across dtypes, calling-thread nodes)
// and two sets of input values (some laid out non-contiguously, some host scalars differing).
// It tracks every variable's concrete shape itself, so it only builds ops that are valid for
// those shapes and bounded in size, and the test can check the shapes the runtime returns.
import { pt, weft } from '../helpers.js';
import { CallingThreadOp } from './fuzz-ops.js';
import { Chooser, stridedCopy } from './fuzz-random.js';

type TV = weft.pt.TensorVariable;
type Shared = weft.pt.TensorSharedVariable;
type Dtype = weft.Dtype;

/** How large a graph's tensors are: inline-sized, worker-sized, or large enough to chunk. */
export type SizeClass = 'small' | 'medium' | 'big';

export interface FuzzCase {
  readonly seed: number;
  readonly size: SizeClass;
  readonly inputs: readonly TV[];
  readonly outputs: readonly TV[];
  /** The concrete shape the generator expects for each output. */
  readonly outputShapes: ReadonlyArray<readonly number[]>;
  /** Sets of input values (same shapes; different values, and different host scalars). */
  readonly valueSets: ReadonlyArray<readonly weft.NdArray[]>;
  /** Shared variables, with their value for each value set (set before each call). */
  readonly shared: ReadonlyArray<{ readonly variable: Shared; readonly values: readonly weft.NdArray[] }>;
  /** Updates of the shared variables (inplace rewrites may overwrite them). */
  readonly updates: ReadonlyArray<readonly [Shared, TV]>;
  /** One line per step: what was built. */
  readonly steps: readonly string[];
}

/** A variable with the concrete shape it has in every call. */
interface Sym {
  readonly v: TV;
  readonly shape: readonly number[];
}

interface Limits {
  /** Largest tensor the generator makes (elements). */
  readonly maxElements: number;
  /** Largest product (multiply-adds). */
  readonly maxProduct: number;
  readonly steps: readonly [number, number];
}

const LIMITS: Readonly<Record<SizeClass, Limits>> = {
  small: { maxElements: 400, maxProduct: 20_000, steps: [3, 9] },
  medium: { maxElements: 120_000, maxProduct: 3_000_000, steps: [3, 7] },
  big: { maxElements: 600_000, maxProduct: 12_000_000, steps: [3, 5] },
};

const FLOATS: readonly Dtype[] = ['float32', 'float64'];
const MAX_INPUTS = 6;

const size = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
const isFloat = (d: Dtype): boolean => d === 'float32' || d === 'float64';

/** Can every value of dtype `from` be stored as `to` without loss? (NumPy's safe casting.) */
function fitsInto(from: Dtype, to: Dtype): boolean {
  if (from === to || from === 'bool') return true;
  const order: Readonly<Record<string, readonly Dtype[]>> = {
    int8: ['int16', 'int32', 'float32', 'float64'],
    int16: ['int32', 'float32', 'float64'],
    int32: ['float64'],
    uint8: ['int16', 'uint16', 'int32', 'uint32', 'float32', 'float64'],
    uint16: ['int32', 'uint32', 'float32', 'float64'],
    uint32: ['float64'],
    float32: ['float64'],
  };
  return order[from]?.includes(to) ?? false;
}

/** Python's slice semantics: the number of elements `start:stop:step` selects from length n. */
export function sliceLength(n: number, start: number | null, stop: number | null, step: number): number {
  if (step > 0) {
    const s = start === null ? 0 : start < 0 ? Math.max(0, start + n) : Math.min(start, n);
    const e = stop === null ? n : stop < 0 ? Math.max(0, stop + n) : Math.min(stop, n);
    return Math.max(0, Math.ceil((e - s) / step));
  }
  const s = start === null ? n - 1 : start < 0 ? Math.max(-1, start + n) : Math.min(start, n - 1);
  const e = stop === null ? -1 : stop < 0 ? Math.max(-1, stop + n) : Math.min(stop, n - 1);
  return Math.max(0, Math.ceil((s - e) / -step));
}

/** Result shape of broadcasting a and b (right-aligned), or null when their types do not allow it. */
function broadcastShape(a: Sym, b: Sym): number[] | null {
  const n = Math.max(a.shape.length, b.shape.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const ia = i - (n - a.shape.length);
    const ib = i - (n - b.shape.length);
    const la = ia >= 0 ? a.shape[ia]! : 1;
    const lb = ib >= 0 ? b.shape[ib]! : 1;
    const staticOneA = ia < 0 || a.v.type.shape[ia] === 1;
    const staticOneB = ib < 0 || b.v.type.shape[ib] === 1;
    if (la === lb) out.push(la);
    else if (staticOneA && la === 1) out.push(lb);
    else if (staticOneB && lb === 1) out.push(la);
    else return null;
  }
  return out;
}

/** Lengths for `rank` axes whose product is near `total`. */
function dimsFor(c: Chooser, total: number, rank: number): number[] {
  const dims: number[] = [];
  let rest = total;
  for (let i = 0; i < rank; i++) {
    const left = rank - i;
    if (left === 1) {
      dims.push(Math.max(1, Math.round(rest)));
      break;
    }
    const even = Math.pow(rest, 1 / left);
    const d = Math.max(2, Math.round(even * (0.4 + 1.6 * c.float())));
    dims.push(d);
    rest = Math.max(1, rest / d);
  }
  return dims;
}

function divisors(n: number): number[] {
  const out: number[] = [];
  for (let d = 1; d * d <= n; d++) {
    if (n % d === 0) {
      out.push(d);
      if (d * d !== n) out.push(n / d);
    }
  }
  return out.sort((a, b) => a - b);
}

class Builder {
  readonly limits: Limits;
  readonly nodes: Sym[] = [];
  readonly inputs: Sym[] = [];
  readonly shared: Array<{ readonly variable: Shared; readonly values: weft.NdArray[]; readonly sym: Sym }> = [];
  /** Per value set, the value of each input (made when the input is). */
  readonly values: weft.NdArray[][] = [[], []];
  readonly steps: string[] = [];
  readonly mainFloat: Dtype;

  constructor(
    readonly c: Chooser,
    readonly sizeClass: SizeClass,
  ) {
    this.limits = LIMITS[sizeClass];
    this.mainFloat = c.pick(FLOATS);
  }

  log(text: string): void {
    this.steps.push(text);
  }

  add(v: TV, shape: readonly number[], what: string): Sym {
    // Every step checks its result's size; this catches one that forgot (a slow, huge case).
    if (size(shape) > this.limits.maxElements) throw new RangeError(`fuzz generator: ${what} has ${size(shape)} elements, above the limit`);
    const s = { v, shape: [...shape] };
    this.nodes.push(s);
    this.log(`${what} -> ${v.type} [${shape.join(',')}]`);
    return s;
  }

  /** A dtype for a new input: mostly the graph's float, sometimes the other float or an integer. */
  inputDtype(): Dtype {
    return this.c.weighted<Dtype>([
      [this.mainFloat, 10],
      [this.mainFloat === 'float32' ? 'float64' : 'float32', 3],
      ['int32', 2],
      ['int8', 1],
      ['uint8', 1],
      ['int16', 1],
      ['bool', 1],
    ]);
  }

  /** A new graph input of `shape`; `staticOnes` marks axes (of length 1) typed broadcastable. */
  newInput(shape: readonly number[], dtype: Dtype, staticOnes: readonly boolean[] = shape.map(() => false)): Sym {
    const name = `x${this.inputs.length}`;
    if (size(shape) > this.limits.maxElements) throw new RangeError(`fuzz generator: input ${name} [${shape.join(',')}] is above the size limit`);
    const staticShape = shape.map((d, a) => (staticOnes[a] && d === 1 ? 1 : this.c.chance(0.08) ? d : null));
    const v = pt.tensor({ shape: staticShape, dtype, name });
    const s = { v, shape: [...shape] };
    this.inputs.push(s);
    this.nodes.push(s);
    const strided: number[] = [];
    for (const [k, set] of this.values.entries()) {
      const value = this.c.values(shape, dtype);
      const scramble = shape.filter((d) => d > 1).length >= 2 && this.c.chance(0.15);
      if (scramble) strided.push(k);
      set.push(scramble ? stridedCopy(value) : value);
    }
    this.log(`input ${name}: ${v.type} [${shape.join(',')}]${strided.length ? ` (Fortran-ordered in value set ${strided.join(', ')})` : ''}`);
    return s;
  }

  /** Room for one more input or shared variable. */
  room(): boolean {
    return this.inputs.length + this.shared.length < MAX_INPUTS;
  }

  /** A shared variable (numeric): an implicit input, updated by every call at the end. */
  newShared(shape: readonly number[], dtype: Dtype): Sym {
    const name = `s${this.shared.length}`;
    const values = this.values.map(() => this.c.values(shape, dtype));
    const variable = weft.shared(values[0]!, { name, dtype });
    const sym = { v: variable as unknown as TV, shape: [...shape] };
    this.shared.push({ variable, values, sym });
    this.nodes.push(sym);
    this.log(`shared ${name}: ${variable.type} [${shape.join(',')}]`);
    return sym;
  }

  /**
   * An update for each shared variable: its value plus something of the graph (or a strided
   * increment of itself), so that inplace rewrites may write it over the old value.
   */
  makeUpdates(): Array<[Shared, TV]> {
    return this.shared.map(({ variable, sym }) => {
      const s = variable as unknown as TV;
      const into = this.nodes.filter((n) => {
        const out = n !== sym && n.v.dtype !== 'bool' ? broadcastShape(sym, n) : null;
        return out !== null && out.length === sym.shape.length && out.every((d, i) => d === sym.shape[i]);
      });
      let update: TV;
      if (sym.shape.length > 0 && this.c.chance(0.3)) update = pt.incSubtensor(s.get(weft.slice(null, null, 2)), 1);
      else if (into.length > 0) {
        const from = this.c.pick(into);
        update = s.add(from.v.dtype === variable.dtype ? from.v : from.v.astype(variable.dtype));
      } else update = s.add(1);
      this.log(`update ${variable} <- ${update}`);
      return [variable, update];
    });
  }

  /**
   * A 0-d integer input: the runtime computes with it on the calling thread (a host value), and
   * its value is part of the plan's signature, so the value sets get different plans.
   */
  newIntScalar(lo: number, hi: number): TV {
    const name = `n${this.inputs.length}`;
    const v = pt.scalar(name, 'int32');
    this.inputs.push({ v, shape: [] });
    for (const set of this.values) set.push(pt.constant(this.c.int(lo, hi), { dtype: 'int32' }).data);
    this.log(`input ${name}: int32 scalar in [${lo}, ${hi}]`);
    return v;
  }

  /** A shape that broadcasts into `shape`: some leading axes dropped, some axes made static 1. */
  broadcastVariant(shape: readonly number[]): { shape: number[]; ones: boolean[] } {
    const drop = this.c.chance(0.3) ? this.c.int(0, shape.length) : 0;
    const kept = shape.slice(drop);
    const ones = kept.map(() => this.c.chance(0.3));
    return { shape: kept.map((d, a) => (ones[a] ? 1 : d)), ones };
  }

  /**
   * An operand: recent nodes more often, so graphs grow deep as well as wide; in big graphs,
   * large nodes more often, so that calls split into tasks.
   */
  operand(filter: (s: Sym) => boolean = () => true): Sym | undefined {
    const ok = this.nodes.filter(filter);
    if (ok.length === 0) return undefined;
    const large = ok.filter((s) => size(s.shape) >= 200_000);
    if (this.sizeClass === 'big' && large.length > 0 && this.c.chance(0.5)) return large[large.length - 1];
    if (this.c.chance(0.55)) return ok[ok.length - 1];
    return this.c.pick(ok);
  }

  /** `s` as a number-valued variable (bool values are cast first). */
  numeric(s: Sym): TV {
    return s.v.dtype === 'bool' ? s.v.astype(this.c.pick<Dtype>(['int8', 'int32', this.mainFloat])) : s.v;
  }

  /** A partner for a binary op with `a`: an existing node, a new input or a constant. */
  partner(a: Sym): { v: TV; sym?: Sym; text: string } {
    const compatible = this.nodes.filter((b) => broadcastShape(a, b) !== null);
    const r = this.c.float();
    if (r < 0.45 && compatible.length > 0) {
      const b = this.c.pick(compatible);
      return { v: b.v, sym: b, text: String(b.v) };
    }
    if (r < 0.75 && this.room()) {
      const variant = this.broadcastVariant(a.shape);
      const dtype = this.inputDtype();
      const b = this.c.chance(0.15) && dtype !== 'bool' ? this.newShared(variant.shape, dtype) : this.newInput(variant.shape, dtype, variant.ones);
      return { v: b.v, sym: b, text: String(b.v) };
    }
    if (r < 0.82 && this.room()) {
      const n = this.newIntScalar(-5, 5);
      const b = { v: n, shape: [] };
      return { v: n, sym: b, text: String(n) };
    }
    if (r < 0.9 && a.shape.length > 0 && a.shape[a.shape.length - 1]! <= 64) {
      // A small constant row, broadcast along the other axes.
      const n = a.shape[a.shape.length - 1]!;
      const data = Array.from({ length: n }, (_, i) => Math.round((Math.sin(i + this.c.float()) * 4) * 8) / 8);
      const k = pt.constant(data, { dtype: this.c.pick(FLOATS) });
      return { v: k, sym: { v: k, shape: [n] }, text: `constant[${n}]` };
    }
    const x = this.c.pick([0.5, 2, -1.25, 3, 1]);
    return { v: pt.constant(x), text: `${x}` };
  }

  // ---- the steps ----

  unaryChain(): boolean {
    const a = this.operand();
    if (!a) return false;
    let v = this.numeric(a);
    const names: string[] = [];
    const length = this.c.int(1, this.sizeClass === 'big' ? 2 : 3);
    for (let i = 0; i < length; i++) {
      const f = this.c.pick(UNARY);
      v = f.apply(v);
      names.push(f.name);
    }
    this.add(v, a.shape, `${names.join('∘')}(${a.v})`);
    return true;
  }

  binary(): boolean {
    const a = this.operand();
    if (!a) return false;
    const p = this.partner(a);
    const b: Sym = p.sym ?? { v: p.v, shape: [] };
    const shape = broadcastShape(a, b);
    if (!shape || size(shape) > this.limits.maxElements) return false;
    const f = this.c.pick(BINARY);
    const x = this.numeric(a);
    const y = b.v.dtype === 'bool' ? this.numeric(b) : p.v;
    const flip = this.c.chance(0.3);
    const v = flip ? f.apply(y, x) : f.apply(x, y);
    this.add(v, shape, `${f.name}(${flip ? `${p.text}, ${a.v}` : `${a.v}, ${p.text}`})`);
    return true;
  }

  compareWhere(): boolean {
    const a = this.operand((s) => s.v.dtype !== 'bool');
    if (!a) return false;
    const p = this.partner(a);
    const b: Sym = p.sym ?? { v: p.v, shape: [] };
    const shape = broadcastShape(a, b);
    if (!shape || b.v.dtype === 'bool' || size(shape) > this.limits.maxElements) return false;
    const cmp = this.c.pick(['lt', 'le', 'gt', 'ge', 'eq', 'neq'] as const);
    const cond = a.v[cmp](p.v);
    const r = this.c.float();
    if (r < 0.5) {
      const v = pt.where(cond, a.v, p.v);
      this.add(v, shape, `where(${cmp}(${a.v}, ${p.text}), ${a.v}, ${p.text})`);
    } else if (r < 0.7) {
      const fits = (s: Sym): boolean => {
        const out = broadcastShape({ v: cond, shape }, s);
        return out !== null && size(out) <= this.limits.maxElements;
      };
      const other = this.operand((s) => s.v.dtype === 'bool' && fits(s));
      if (other) {
        const op = this.c.pick(['and', 'or', 'xor'] as const);
        const out = broadcastShape({ v: cond, shape }, other)!;
        this.add(cond[op](other.v), out, `${op}(${cmp}(${a.v}, ${p.text}), ${other.v})`);
      } else {
        this.add(cond.not(), shape, `not(${cmp}(${a.v}, ${p.text}))`);
      }
    } else {
      this.add(cond, shape, `${cmp}(${a.v}, ${p.text})`);
    }
    return true;
  }

  cast(): boolean {
    const a = this.operand();
    if (!a) return false;
    const to = this.c.pick<Dtype>(['float32', 'float64', 'int32', 'int16', 'int8', 'uint8', 'bool']);
    if (to === a.v.dtype) return false;
    this.add(a.v.astype(to), a.shape, `astype(${a.v}, ${to})`);
    return true;
  }

  reduce(): boolean {
    const a = this.operand((s) => s.shape.length > 0 && size(s.shape) > 0);
    if (!a) return false;
    const rank = a.shape.length;
    const kind = this.c.pick(['sum', 'sum', 'prod', 'max', 'min', 'mean', 'argmax', 'argmin', 'any', 'all', 'var', 'std'] as const);
    const single = kind === 'argmax' || kind === 'argmin';
    let axes: number[] | undefined;
    const r = this.c.float();
    if (r < 0.2) axes = undefined;
    else if (r < 0.7 || single || rank === 1) axes = [this.c.int(0, rank - 1)];
    else axes = this.c.shuffle([...Array(rank).keys()]).slice(0, this.c.int(1, rank)).sort((x, y) => x - y);
    const keepdims = this.c.chance(0.4);
    const options = { axis: axes === undefined ? undefined : axes.length === 1 && this.c.chance(0.5) ? axes[0] : axes, keepdims };
    const reduced = new Set(axes ?? [...Array(rank).keys()]);
    const shape = keepdims ? a.shape.map((d, i) => (reduced.has(i) ? 1 : d)) : a.shape.filter((_, i) => !reduced.has(i));
    const x = kind === 'any' || kind === 'all' ? a.v : this.numeric(a);
    const v = x[kind](options);
    this.add(v, shape, `${kind}(${a.v}, axis=${JSON.stringify(options.axis ?? null)}, keepdims=${keepdims})`);
    return true;
  }

  dimshuffle(): boolean {
    const a = this.operand((s) => s.shape.length > 0 || this.c.chance(0.3));
    if (!a) return false;
    const rank = a.shape.length;
    const statics = a.v.type.shape;
    const kept = [...Array(rank).keys()].filter((i) => statics[i] !== 1 || this.c.chance(0.5));
    const order: Array<number | 'x'> = this.c.shuffle(kept);
    const inserts = rank < 4 && this.c.chance(0.4) ? this.c.int(1, 2) : 0;
    for (let i = 0; i < inserts; i++) order.splice(this.c.int(0, order.length), 0, 'x');
    if (order.length === 0) order.push('x');
    const shape = order.map((o) => (o === 'x' ? 1 : a.shape[o]!));
    const useT = rank === 2 && this.c.chance(0.3);
    const v = useT ? a.v.T : a.v.dimshuffle(...order);
    this.add(v, useT ? [a.shape[1]!, a.shape[0]!] : shape, useT ? `${a.v}.T` : `dimshuffle(${a.v}, ${order.join(',')})`);
    return true;
  }

  reshape(): boolean {
    const a = this.operand((s) => size(s.shape) > 0);
    if (!a) return false;
    const n = size(a.shape);
    const divs = divisors(n);
    let shape: number[];
    const r = this.c.float();
    if (r < 0.25) shape = [n];
    else if (r < 0.65) {
      const p = this.c.pick(divs);
      shape = [p, n / p];
    } else if (r < 0.9) {
      const p = this.c.pick(divs);
      const q = this.c.pick(divisors(n / p));
      shape = [p, q, n / p / q];
    } else shape = this.c.shuffle([1, n]);
    const spec: number[] = [...shape];
    if (shape.length > 1 && this.c.chance(0.4)) spec[this.c.int(0, shape.length - 1)] = -1;
    const v = this.c.chance(0.15) && shape.length === 1 ? a.v.flatten() : a.v.reshape(spec);
    this.add(v, shape, `reshape(${a.v}, [${spec.join(',')}])`);
    return true;
  }

  /** Random index entries for `a`: slices with steps, integers, new axes (rarely an empty slice). */
  indexFor(a: Sym, allowInts: boolean, allowEmpty = false): { index: weft.IndexEntry[]; shape: number[]; text: string } | undefined {
    const index: weft.IndexEntry[] = [];
    const shape: number[] = [];
    const text: string[] = [];
    for (let axis = 0; axis < a.shape.length; axis++) {
      const n = a.shape[axis]!;
      if (this.c.chance(0.08) && shape.length < 4) {
        index.push(null);
        shape.push(1);
        text.push('None');
      }
      const r = this.c.float();
      if (r < 0.3) {
        index.push(weft.slice(null, null));
        shape.push(n);
        text.push(':');
      } else if (allowInts && r < 0.45 && n > 0) {
        if (this.c.chance(0.2) && this.room()) {
          const iv = this.newIntScalar(-n, n - 1);
          index.push(iv);
          text.push(String(iv));
        } else {
          const i = this.c.int(-n, n - 1);
          index.push(i);
          text.push(String(i));
        }
      } else {
        const step = this.c.pick([1, 1, 2, 3, -1, -2, 5]);
        const bound = (): number | null => (this.c.chance(0.35) ? null : this.c.int(-n, n));
        let start = bound();
        let stop = bound();
        let len = sliceLength(n, start, stop, step);
        if (len === 0 && !(allowEmpty && this.c.chance(0.5))) {
          start = null;
          stop = null;
          len = sliceLength(n, null, null, step);
        }
        index.push(weft.slice(start, stop, step));
        shape.push(len);
        text.push(`${start ?? ''}:${stop ?? ''}:${step}`);
      }
    }
    if (size(shape) === 0 && !allowEmpty) return undefined;
    return { index, shape, text: text.join(', ') };
  }

  subtensor(): boolean {
    const a = this.operand((s) => s.shape.length > 0 && size(s.shape) > 0);
    if (!a) return false;
    const idx = this.indexFor(a, true, this.c.chance(0.1));
    if (!idx) return false;
    this.add(a.v.get(...idx.index), idx.shape, `${a.v}[${idx.text}]`);
    return true;
  }

  split(): boolean {
    const a = this.operand((s) => s.shape.some((d) => d >= 2));
    if (!a) return false;
    const axes = a.shape.flatMap((d, i) => (d >= 2 ? [i] : []));
    const axis = this.c.pick(axes);
    const n = a.shape[axis]!;
    const parts = Math.min(n, this.c.int(2, 3));
    const cuts = this.c.shuffle([...Array(n - 1).keys()].map((i) => i + 1)).slice(0, parts - 1).sort((x, y) => x - y);
    const sizes = [...cuts, n].map((c, i, all) => c - (i === 0 ? 0 : all[i - 1]!));
    const outs = pt.split(a.v, sizes, axis);
    outs.forEach((o, i) => {
      this.add(o, a.shape.map((d, j) => (j === axis ? sizes[i]! : d)), `split(${a.v}, [${sizes.join(',')}], ${axis})[${i}]`);
    });
    return true;
  }

  concatenate(): boolean {
    const a = this.operand((s) => s.shape.length > 0);
    if (!a) return false;
    const axis = this.c.int(0, a.shape.length - 1);
    const parts: Sym[] = [a];
    const count = this.c.int(1, 2);
    for (let i = 0; i < count; i++) {
      const r = this.c.float();
      if (r < 0.35) {
        const f = this.c.pick(UNARY);
        parts.push({ v: f.apply(this.numeric(a)), shape: a.shape });
      } else if (r < 0.6 && a.shape[axis]! > 1) {
        const n = a.shape[axis]!;
        const start = this.c.int(0, n - 1);
        const index = a.shape.map((_, j) => (j === axis ? weft.slice(start, null) : weft.slice(null, null)));
        parts.push({ v: a.v.get(...index), shape: a.shape.map((d, j) => (j === axis ? n - start : d)) });
      } else if (this.room()) {
        const shape = a.shape.map((d, j) => (j === axis ? this.c.int(1, Math.max(1, Math.min(d, 50))) : d));
        const ones = a.v.type.shape.map((d, j) => j !== axis && d === 1);
        parts.push(this.newInput(shape, this.c.chance(0.7) ? a.v.dtype : this.inputDtype(), ones));
      } else {
        parts.push(a);
      }
    }
    const shape = a.shape.map((d, j) => (j === axis ? parts.reduce((s, p) => s + p.shape[axis]!, 0) : d));
    if (size(shape) > this.limits.maxElements) return false;
    const stack = this.c.chance(0.15) && parts.every((p) => p.shape[axis] === a.shape[axis]);
    if (stack) {
      const out = [...a.shape.slice(0, axis), parts.length, ...a.shape.slice(axis)];
      this.add(pt.stack(parts.map((p) => p.v), axis), out, `stack([${parts.map((p) => p.v).join(', ')}], ${axis})`);
    } else {
      this.add(pt.concatenate(parts.map((p) => p.v), axis), shape, `concatenate([${parts.map((p) => p.v).join(', ')}], ${axis})`);
    }
    return true;
  }

  product(): boolean {
    const a = this.operand((s) => s.shape.length >= 1 && s.shape.length <= 3 && size(s.shape) > 0 && s.v.dtype !== 'bool');
    if (!a) return false;
    const cap = this.limits.maxProduct;
    const most = this.limits.maxElements;
    const rank = a.shape.length;
    const dtype = (): Dtype => (this.c.chance(0.8) && isFloat(a.v.dtype) ? a.v.dtype : this.c.pick(FLOATS));
    const k = a.shape[rank - 1]!;
    if (rank === 1) {
      if (this.c.chance(0.4)) {
        this.add(a.v.dot(a.v), [], `dot(${a.v}, ${a.v})`);
        return true;
      }
      const n = Math.min(64, Math.floor(cap / k), Math.floor(most / k));
      if (n < 1) return false;
      const w = this.newInput([k, this.c.int(1, n)], dtype());
      this.add(a.v.dot(w.v), [w.shape[1]!], `dot(${a.v}, ${w.v})`);
      return true;
    }
    const m = a.shape[rank - 2]!;
    const batch = rank === 3 ? a.shape[0]! : 1;
    const r = this.c.float();
    if (rank === 2 && r < 0.3) {
      // With its own transpose: a strided (transposed) operand.
      if (this.c.chance(0.5) && m * m * k <= cap && m * m <= most) {
        this.add(a.v.dot(a.v.T), [m, m], `dot(${a.v}, ${a.v}.T)`);
        return true;
      }
      if (k * k * m <= cap && k * k <= most) {
        this.add(a.v.T.dot(a.v), [k, k], `dot(${a.v}.T, ${a.v})`);
        return true;
      }
    }
    if (rank === 2 && r < 0.45) {
      const x = this.newInput([k], dtype());
      this.add(a.v.dot(x.v), [m], `dot(${a.v}, ${x.v})`);
      return true;
    }
    // The new factor is [k, n] (or [batch, k, n]) and the product [..., m, n]: all within limits.
    const nMax = Math.min(96, Math.floor(cap / (batch * m * k)), Math.floor(most / (batch * m)), Math.floor(most / (batch * k)));
    if (nMax < 1) return false;
    const n = this.c.int(1, nMax);
    if (rank === 3 && this.c.chance(0.5)) {
      const w = this.newInput([batch, k, n], dtype());
      this.add(pt.matmul(a.v, w.v), [batch, m, n], `matmul(${a.v}, ${w.v})`);
      return true;
    }
    const w = this.newInput([k, n], dtype());
    const useMatmul = rank === 3 || this.c.chance(0.4);
    const v = useMatmul ? pt.matmul(a.v, w.v) : a.v.dot(w.v);
    this.add(v, [...a.shape.slice(0, rank - 1), n], `${useMatmul ? 'matmul' : 'dot'}(${a.v}, ${w.v})`);
    return true;
  }

  softmax(): boolean {
    const a = this.operand((s) => s.shape.length > 0 && size(s.shape) > 0 && s.v.dtype !== 'bool');
    if (!a) return false;
    const axis = this.c.chance(0.5) ? -1 : this.c.int(0, a.shape.length - 1);
    const log = this.c.chance(0.35);
    const x = isFloat(a.v.dtype) ? a.v : a.v.astype(this.mainFloat);
    this.add(log ? pt.logSoftmax(x, axis) : pt.softmax(x, axis), a.shape, `${log ? 'logSoftmax' : 'softmax'}(${a.v}, ${axis})`);
    return true;
  }

  alloc(): boolean {
    const a = this.operand((s) => s.shape.length <= 3);
    if (!a) return false;
    const r = this.c.float();
    if (r < 0.3) {
      const like = this.c.pick(['zerosLike', 'onesLike'] as const);
      const p = this.partner(a);
      const b: Sym = p.sym ?? { v: p.v, shape: [] };
      const shape = broadcastShape(a, b);
      if (!shape || size(shape) > this.limits.maxElements) return false;
      const v = pt[like](a.v).add(this.numeric(b));
      this.add(v, shape, `${like}(${a.v}) + ${p.text}`);
      return true;
    }
    if (r < 0.5) {
      const which = this.c.pick(['zeros', 'ones'] as const);
      const dtype = this.c.pick<Dtype>([this.mainFloat, 'int32', 'float32']);
      const v = pt[which](a.shape, dtype);
      this.add(v, a.shape, `${which}([${a.shape.join(',')}], ${dtype})`);
      return true;
    }
    // Broadcast a into a larger shape: new leading axes, static-1 axes expanded.
    const lead = this.c.int(0, 2);
    const shape = a.shape.map((d, i) => (a.v.type.shape[i] === 1 && this.c.chance(0.6) ? this.c.int(2, 5) : d));
    for (let i = 0; i < lead; i++) shape.unshift(this.c.int(1, 4));
    if (size(shape) > this.limits.maxElements) return false;
    this.add(pt.alloc(a.v, ...shape), shape, `alloc(${a.v}, ${shape.join(',')})`);
    return true;
  }

  setInc(): boolean {
    const a = this.operand((s) => s.shape.length > 0 && size(s.shape) > 0 && s.v.dtype !== 'bool');
    if (!a) return false;
    const idx = this.indexFor(a, this.c.chance(0.3));
    if (!idx) return false;
    const view = a.v.get(...idx.index);
    const target: Sym = { v: view, shape: idx.shape };
    let y: TV | number;
    let text: string;
    const r = this.c.float();
    if (r < 0.4 && this.room()) {
      const variant = this.broadcastVariant(idx.shape);
      const b = this.newInput(variant.shape, this.c.chance(0.7) ? a.v.dtype : this.mainFloat, variant.ones);
      y = b.v;
      text = String(b.v);
    } else if (r < 0.7) {
      const b = this.operand((s) => s.v.dtype !== 'bool' && s.shape.length <= idx.shape.length && broadcastShape(target, s) !== null && broadcastShape(target, s)!.every((d, i) => d === idx.shape[i]));
      if (!b) return false;
      y = b.v;
      text = String(b.v);
    } else {
      // A plain number: weak, it takes the destination's dtype.
      y = this.c.pick(a.v.dtype.startsWith('uint') ? [1, 2, 3] : [1, 2, -3, 0.5]);
      if (!isFloat(a.v.dtype)) y = Math.round(y);
      text = String(y);
    }
    // The value must fit the destination's dtype: inc/set refuse a silent downcast.
    if (typeof y !== 'number' && y.dtype !== a.v.dtype && this.c.chance(0.7)) y = y.astype(a.v.dtype);
    if (typeof y !== 'number' && !fitsInto(y.dtype, a.v.dtype)) y = y.astype(a.v.dtype);
    const inc = this.c.chance(0.5);
    const v = inc ? pt.incSubtensor(view, y) : pt.setSubtensor(view, y);
    this.add(v, a.shape, `${inc ? 'inc' : 'set'}Subtensor(${a.v}[${idx.text}], ${text})`);
    return true;
  }

  clipRelu(): boolean {
    const a = this.operand((s) => s.v.dtype !== 'bool');
    if (!a) return false;
    if (this.c.chance(0.5) && isFloat(a.v.dtype)) {
      this.add(pt.relu(a.v), a.shape, `relu(${a.v})`);
    } else {
      const lo = this.c.pick([-1, 0, -2]);
      this.add(pt.clip(a.v, lo, lo + this.c.pick([1, 2, 3])), a.shape, `clip(${a.v})`);
    }
    return true;
  }

  /** A node without a worker kernel: a calling-thread task between worker tasks. */
  callingThread(): boolean {
    const a = this.operand((s) => s.v.dtype !== 'bool');
    if (!a) return false;
    const factor = this.c.pick([2, -1, 0.5]);
    this.add(new CallingThreadOp(factor).call(a.v) as TV, a.shape, `callingThread(${a.v}, ${factor})`);
    return true;
  }

  outer(): boolean {
    const a = this.operand((s) => s.shape.length === 1 && s.v.dtype !== 'bool');
    if (!a) return false;
    const b = this.operand((s) => s.shape.length === 1 && s.v.dtype !== 'bool' && s.shape[0]! * a.shape[0]! <= this.limits.maxElements);
    if (!b) return false;
    this.add(pt.outer(a.v, b.v), [a.shape[0]!, b.shape[0]!], `outer(${a.v}, ${b.v})`);
    return true;
  }
}

interface Unary {
  readonly name: string;
  apply(x: TV): TV;
}

/** Unary chains that stay finite on any input (so NaNs are rare and results comparable). */
const UNARY: readonly Unary[] = [
  { name: 'neg', apply: (x) => x.neg() },
  { name: 'abs', apply: (x) => x.abs() },
  { name: 'tanh', apply: (x) => x.tanh() },
  { name: 'sigmoid', apply: (x) => x.sigmoid() },
  { name: 'sin', apply: (x) => x.sin() },
  { name: 'cos', apply: (x) => x.cos() },
  { name: 'exp∘tanh', apply: (x) => x.tanh().exp() },
  { name: 'log1p∘abs', apply: (x) => x.abs().log1p() },
  { name: 'sqrt∘abs', apply: (x) => x.abs().sqrt() },
  { name: 'sqr∘tanh', apply: (x) => x.tanh().sqr() },
  { name: 'softplus', apply: (x) => x.softplus() },
  { name: 'erf', apply: (x) => x.erf() },
  { name: 'floor', apply: (x) => x.floor() },
  { name: 'round', apply: (x) => x.round() },
  { name: 'arctan', apply: (x) => x.arctan() },
  { name: 'sign', apply: (x) => x.sign() },
  { name: 'mul2', apply: (x) => x.mul(2) },
  { name: 'add1', apply: (x) => x.add(1) },
];

interface Binary {
  readonly name: string;
  apply(x: TV, y: TV): TV;
}

const BINARY: readonly Binary[] = [
  { name: 'add', apply: (x, y) => x.add(y) },
  { name: 'add', apply: (x, y) => x.add(y) },
  { name: 'sub', apply: (x, y) => x.sub(y) },
  { name: 'mul', apply: (x, y) => x.mul(y) },
  { name: 'mul', apply: (x, y) => x.mul(y) },
  { name: 'trueDiv', apply: (x, y) => x.trueDiv(y.abs().add(1)) },
  { name: 'intDiv', apply: (x, y) => x.intDiv(pt.maximum(y.abs(), 1)) },
  { name: 'mod', apply: (x, y) => x.mod(pt.maximum(y.abs(), 1)) },
  { name: 'maximum', apply: (x, y) => pt.maximum(x, y) },
  { name: 'minimum', apply: (x, y) => pt.minimum(x, y) },
  { name: 'arctan2', apply: (x, y) => pt.arctan2(x, y) },
  { name: 'pow', apply: (x, y) => x.abs().add(0.5).pow(y.tanh()) },
  { name: 'add3', apply: (x, y) => pt.add(x, y, x.mul(0.5)) },
];

type Step = keyof Builder & ('unaryChain' | 'binary' | 'compareWhere' | 'cast' | 'reduce' | 'dimshuffle' | 'reshape' | 'subtensor' | 'split' | 'concatenate' | 'product' | 'softmax' | 'alloc' | 'setInc' | 'clipRelu' | 'outer' | 'callingThread');

const STEPS: ReadonlyArray<readonly [Step, number]> = [
  ['unaryChain', 12],
  ['binary', 14],
  ['compareWhere', 3],
  ['cast', 3],
  ['reduce', 8],
  ['dimshuffle', 6],
  ['reshape', 5],
  ['subtensor', 7],
  ['split', 3],
  ['concatenate', 4],
  ['product', 4],
  ['softmax', 3],
  ['alloc', 3],
  ['setInc', 4],
  ['clipRelu', 2],
  ['outer', 1],
  ['callingThread', 2],
];

/** The size class of a seed: one in four small, two in four medium, one in four big. */
export function sizeClassOf(seed: number): SizeClass {
  return (['small', 'medium', 'big', 'medium'] as const)[seed % 4]!;
}

/** The graph and values of `seed`. */
export function makeCase(seed: number): FuzzCase {
  const c = new Chooser(seed);
  const sizeClass = sizeClassOf(seed);
  const b = new Builder(c, sizeClass);
  const rank = c.weighted<number>(sizeClass === 'small' ? [[0, 1], [1, 3], [2, 4], [3, 2]] : [[1, 2], [2, 5], [3, 3]]);
  const total = sizeClass === 'small' ? c.int(1, 60) : sizeClass === 'medium' ? c.int(15_000, 60_000) : c.int(270_000, 420_000);
  const base = dimsFor(c, total, rank);
  b.log(`${sizeClass} graph, base shape [${base.join(',')}]`);
  const first = c.int(1, 2);
  for (let i = 0; i < first; i++) {
    const variant = i === 0 ? { shape: base, ones: base.map(() => false) } : b.broadcastVariant(base);
    b.newInput(variant.shape, i === 0 ? b.mainFloat : b.inputDtype(), variant.ones);
  }
  // A shared variable the graph reads and updates (a parameter, as in training loops).
  if (c.chance(0.3)) b.newShared(b.broadcastVariant(base).shape, c.chance(0.8) ? b.mainFloat : 'int32');
  const steps = c.int(...b.limits.steps);
  let made = 0;
  for (let attempt = 0; made < steps && attempt < steps * 6; attempt++) {
    const step = c.weighted(STEPS);
    if (b[step]()) made += 1;
  }
  // Outputs: the last node, and up to two others (views and inputs included).
  const last = b.nodes[b.nodes.length - 1]!;
  // Sometimes the same variable twice: the second must be a copy of its own.
  const outs: Sym[] = c.chance(0.05) ? [last, last] : [last];
  const extra = c.int(0, 2);
  for (let i = 0; i < extra; i++) {
    const o = c.pick(b.nodes);
    if (!outs.some((s) => s.v === o.v) && (!b.inputs.includes(o) || c.chance(0.2))) outs.push(o);
  }
  const updates = b.makeUpdates();
  return {
    seed,
    size: sizeClass,
    inputs: b.inputs.map((s) => s.v),
    outputs: outs.map((s) => s.v),
    outputShapes: outs.map((s) => s.shape),
    valueSets: b.values,
    shared: b.shared.map(({ variable, values }) => ({ variable, values })),
    updates,
    steps: b.steps,
  };
}
