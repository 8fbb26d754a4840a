// Random variables and weft.RandomStream: Philox4x32-10 against its published known answers and
// a copy written again here (BigInt), each element's draws from (key, position + index), weft.Rng's
// xoshiro128** against its reference outputs, distributions over 100k draws, shapes (static,
// symbolic, 0-d, empty) and inferShape, broadcast parameters, default updates through compile,
// seeding, bitwise equal draws on 0, 1 and 2 workers, merging, gradients and Rop, serialization,
// bad input. The other distributions: distributions.test.ts.
import t from 'tap';
import { philox4x32 } from '../../src/kernels/philox.js';
import { Prng, Xoshiro128 } from '../../src/kernels/prng.js';
import { near, pt, throwsExactly, weft } from '../helpers.js';

type TV = weft.pt.TensorVariable;
type Shared = weft.pt.TensorSharedVariable;

// ---------------------------------------------------------------------------------------------
// The generator, written again from the published algorithms (xoshiro128**, splitmix32).

const M32 = 0x100000000;
const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0;

class Reference {
  readonly s: number[];
  constructor(words: ArrayLike<number>) {
    this.s = Array.from(words, (w) => w >>> 0);
  }
  next(): number {
    const s = this.s;
    const out = Number((BigInt(rotl(Number((BigInt(s[1]!) * 5n) % BigInt(M32)), 7)) * 9n) % BigInt(M32));
    const t = (s[1]! * 512) % M32;
    s[2] = (s[2]! ^ s[0]!) >>> 0;
    s[3] = (s[3]! ^ s[1]!) >>> 0;
    s[1] = (s[1]! ^ s[2]!) >>> 0;
    s[0] = (s[0]! ^ s[3]!) >>> 0;
    s[2] = (s[2]! ^ t) >>> 0;
    s[3] = rotl(s[3]!, 11);
    return out;
  }
  /** 53 random bits: 27 from one word, 26 from the next. */
  double(): number {
    const hi = Math.floor(this.next() / 32);
    const lo = Math.floor(this.next() / 64);
    return (hi * 2 ** 26 + lo) / 2 ** 53;
  }
}

function splitmix32(seed: number): number[] {
  let x = seed;
  return [0, 1, 2, 3].map(() => {
    x = (x + 0x9e3779b9) % M32;
    let z = x;
    z = Number((BigInt((z ^ (z >>> 16)) >>> 0) * 0x85ebca6bn) % BigInt(M32));
    z = Number((BigInt((z ^ (z >>> 13)) >>> 0) * 0xc2b2ae35n) % BigInt(M32));
    return (z ^ (z >>> 16)) >>> 0;
  });
}

// Philox4x32-10 written again with BigInt, and the numbers of element i of a draw from a state.
const MASK = 0xffffffffn;
function philoxRef(ctr: readonly number[], key: readonly number[]): number[] {
  let [c0, c1, c2, c3] = ctr.map(BigInt) as [bigint, bigint, bigint, bigint];
  let [k0, k1] = key.map(BigInt) as [bigint, bigint];
  for (let r = 0; r < 10; r++) {
    if (r > 0) [k0, k1] = [(k0 + 0x9e3779b9n) & MASK, (k1 + 0xbb67ae85n) & MASK];
    const p0 = 0xd2511f53n * c0;
    const p1 = 0xcd9e8d57n * c2;
    [c0, c1, c2, c3] = [((p1 >> 32n) ^ c1 ^ k0) & MASK, p1 & MASK, ((p0 >> 32n) ^ c3 ^ k1) & MASK, p0 & MASK];
  }
  return [c0, c1, c2, c3].map(Number);
}

/** The words element i of a draw reads, from the state [k0, k1, base0, base1]: blocks (base + i, sub = 0, 1, ...). */
class ElementRef {
  readonly #words: number[] = [];
  #sub = 0;
  readonly #ctr: [number, number];
  constructor(
    readonly state: readonly number[],
    i: number,
  ) {
    const pos = BigInt(state[2]!) + (BigInt(state[3]!) << 32n) + BigInt(i);
    this.#ctr = [Number(pos & MASK), Number((pos >> 32n) & MASK)];
  }
  word(): number {
    if (this.#words.length === 0) this.#words.push(...philoxRef([this.#ctr[0], this.#ctr[1], this.#sub++, 0], [this.state[0]!, this.state[1]!]));
    return this.#words.shift()!;
  }
  double(): number {
    return (Math.floor(this.word() / 32) * 2 ** 26 + Math.floor(this.word() / 64)) / 2 ** 53;
  }
  open(): number {
    return (Math.floor(this.word() / 64) * 2 ** 26 + Math.floor(this.word() / 64) + 0.5) / 2 ** 52;
  }
}
const advancedBy = (state: readonly number[], n: number): number[] => {
  const pos = BigInt(state[2]!) + (BigInt(state[3]!) << 32n) + BigInt(n);
  return [state[0]!, state[1]!, Number(pos & MASK), Number((pos >> 32n) & MASK)];
};

const stateOf = (draws: TV): Shared => draws.owner!.inputs[0] as Shared;
const flat = (a: weft.NdArray): number[] => {
  const l = weft.tolist(a);
  return Array.isArray(l) ? (l as unknown[]).flat(8).map(Number) : [Number(l)];
};
const mean = (xs: readonly number[]): number => xs.reduce((p, q) => p + q, 0) / xs.length;
const std = (xs: readonly number[]): number => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((p, q) => p + (q - m) ** 2, 0) / xs.length);
};

t.test('the generator: Philox4x32-10 known answers, each element from (key, position + index); weft.Rng is xoshiro128**', async (t) => {
  const block = new Uint32Array(4);
  const kat: Array<[number[], number[], number[]]> = [
    [[0, 0, 0, 0], [0, 0], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]],
    [[0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff], [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]],
    [[0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0], [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]],
  ];
  for (const [ctr, key, want] of kat) {
    philox4x32(ctr[0]!, ctr[1]!, ctr[2]!, ctr[3]!, key[0]!, key[1]!, block);
    t.same(Array.from(block), want, `Random123's known answer for counter ${ctr.map((w) => w.toString(16))}`);
    t.same(philoxRef(ctr, key), want, 'and the copy written here');
  }
  // Uniform uint32 integers over the whole range are each element's first word; the position
  // crosses a 32-bit boundary on the way (the carry into the second word).
  const start = [1, 2, 0xfffffffa, 4];
  const state = weft.shared(new Uint32Array(start), { name: 'state' });
  const [next, draws] = new weft.IntegersRV('uint32', 1).call(state, 10, 0, 2 ** 32) as TV[];
  const fn = await weft.compile([], [draws!, next!]);
  const [d, n] = await fn();
  t.same(weft.tolist(d!), Array.from({ length: 10 }, (_, i) => new ElementRef(start, i).word()), 'element i: the first word of block (base + i, 0)');
  t.same(weft.tolist(n!), [1, 2, 4, 5], 'the state after 10 draws: the position moved on by 10, carried');
  t.same(weft.tolist(state.getValue()), start, 'a state without a default update stays as it is');
  t.same(Array.from(weft.randomState(2024).data), splitmix32(2024), 'randomState: splitmix32 from the seed');
  const a = Xoshiro128.fromSeed(77);
  const b = new Prng(77);
  t.same([0, 1, 2, 3, 4].map(() => a.nextUint32()), [0, 1, 2, 3, 4].map(() => b.nextUint32()), 'Prng(seed) is the generator fromSeed(seed) gives');
  // weft.Rng's generator (Prng) against the reference: words, then floats, then normals (Box-Muller).
  for (const seed of [0, 77, 0xffffffff]) {
    const p = new Prng(seed);
    const r = new Reference(splitmix32(seed));
    const words = Array.from({ length: 1000 }, () => p.nextUint32());
    t.same(words, Array.from({ length: 1000 }, () => r.next()), `seed ${seed}: Prng's words`);
    t.same(Array.from({ length: 100 }, () => p.nextFloat()), Array.from({ length: 100 }, () => r.double()), `seed ${seed}: Prng's floats`);
    const normal = (): number => {
      const u = r.double();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.double());
    };
    t.same(Array.from({ length: 100 }, () => p.nextNormal()), Array.from({ length: 100 }, normal), `seed ${seed}: Prng's normals`);
  }
  t.same(Array.from({ length: 4 }, () => new weft.Rng(5).random()), Array.from({ length: 4 }, () => new Reference(splitmix32(5)).double()), 'weft.Rng draws from Prng');
});

t.test('uniform: the values the state gives, within [low, high), float64 and float32', async (t) => {
  const stream = new weft.RandomStream(11);
  const d64 = stream.uniform([1000], { low: -2, high: 3 });
  const d32 = stream.uniform([1000], { low: -2, high: 3, dtype: 'float32' });
  const s64 = weft.tolist(stateOf(d64).getValue()) as number[];
  const s32 = weft.tolist(stateOf(d32).getValue()) as number[];
  t.equal(d64.dtype, 'float64');
  t.equal(d32.dtype, 'float32');
  t.same(d64.type.shape, [1000]);
  const [v64, v32] = await (await weft.compile([], [d64, d32]))();
  const want64 = Array.from({ length: 1000 }, (_, i) => -2 + 5 * new ElementRef(s64, i).double());
  const want32 = Array.from({ length: 1000 }, (_, i) => Math.fround(-2 + 5 * new ElementRef(s32, i).double()));
  t.same(flat(v64!), want64, 'float64 draws, bit for bit');
  t.same(flat(v32!), want32, 'float32 draws, bit for bit');
  t.same(weft.tolist(stateOf(d64).getValue()), advancedBy(s64, 1000), 'the state advanced by the default update');
  t.equal(v64!.data.constructor.name, 'Float64Array');
  t.equal(v32!.data.constructor.name, 'Float32Array');

  const big = stream.uniform([100000], { low: 10, high: 10.5 });
  const xs = flat(await big.eval());
  t.ok(xs.every((x) => x >= 10 && x < 10.5), 'every draw in [10, 10.5)');
  t.ok(Math.abs(mean(xs) - 10.25) < 0.002, `mean ${mean(xs)} near 10.25`);
  t.ok(Math.abs(std(xs) - 0.5 / Math.sqrt(12)) < 0.002, `std ${std(xs)} near 0.5/sqrt(12)`);
  // A float32 draw that rounds up to the open bound is moved below it.
  const tight = flat(await stream.uniform([20000], { low: 1, high: 1 + 2 ** -20, dtype: 'float32' }).eval());
  t.ok(tight.every((x) => x >= 1 && x < 1 + 2 ** -20), 'float32 draws stay below high when rounding would reach it');
  t.same(flat(await stream.uniform([3], { low: 4, high: 4 }).eval()), [4, 4, 4], 'low == high gives low');
});

t.test('normal: the values the state gives, mean and std over 100k draws', async (t) => {
  const stream = new weft.RandomStream(12);
  const d = stream.normal([5], { mean: 1, std: 3 });
  const s0 = weft.tolist(stateOf(d).getValue()) as number[];
  const want = Array.from({ length: 5 }, (_, i) => {
    const e = new ElementRef(s0, i);
    const rad = Math.sqrt(-2 * Math.log(e.open()));
    return 1 + 3 * (rad * Math.cos(2 * Math.PI * e.double()));
  });
  t.same(flat(await d.eval()), want, 'Box-Muller, the cosine branch of each element\'s own pair, bit for bit');
  t.same(weft.tolist(stateOf(d).getValue()), advancedBy(s0, 5), 'the position moved on by 5');
  for (const dtype of ['float64', 'float32'] as const) {
    const xs = flat(await stream.normal([100000], { mean: 3, std: 2, dtype }).eval());
    t.ok(Math.abs(mean(xs) - 3) < 0.03, `${dtype}: mean ${mean(xs)} near 3`);
    t.ok(Math.abs(std(xs) - 2) < 0.03, `${dtype}: std ${std(xs)} near 2`);
    const within1 = xs.filter((x) => Math.abs(x - 3) < 2).length / xs.length;
    t.ok(Math.abs(within1 - 0.6827) < 0.01, `${dtype}: ${within1} within one std (0.6827 expected)`);
  }
  t.same(flat(await stream.normal([2], { mean: 5, std: 0 }).eval()), [5, 5], 'std 0 gives the mean');
});

t.test('integers: in range, covering it, evenly, for several dtypes', async (t) => {
  const stream = new weft.RandomStream(13);
  const xs = flat(await stream.integers([70000], -3, 4, 'int8').eval());
  const counts = new Map<number, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  t.same([...counts.keys()].sort((a, b) => a - b), [-3, -2, -1, 0, 1, 2, 3], 'every value of [-3, 4), nothing else');
  t.ok([...counts.values()].every((c) => Math.abs(c - 10000) < 500), `counts near 10000: ${[...counts.values()]}`);
  const u8 = stream.integers([5000], 0, 256, 'uint8');
  t.equal(u8.dtype, 'uint8');
  const bytes = flat(await u8.eval());
  t.equal(new Set(bytes).size, 256, 'uint8 over [0, 256) reaches every byte');
  const wide = flat(await stream.integers([1000], -(2 ** 31), 2 ** 31).eval());
  t.ok(wide.every((x) => Number.isInteger(x) && x >= -(2 ** 31) && x < 2 ** 31), 'int32 over its whole range');
  t.ok(wide.some((x) => x < -(2 ** 30)) && wide.some((x) => x > 2 ** 30), 'both ends of the int32 range occur');
  // Exact values: a range that is not a power of two rejects the tail of the 32-bit outputs.
  const d = stream.integers([50], 0, 3);
  const s0 = weft.tolist(stateOf(d).getValue()) as number[];
  const limit = M32 - (M32 % 3);
  const want = Array.from({ length: 50 }, (_, i) => {
    const e = new ElementRef(s0, i);
    let x = e.word();
    while (x >= limit) x = e.word();
    return x % 3;
  });
  t.same(flat(await d.eval()), want, 'values from the state');
});

t.test('seeding: same seed same draws, re-seeding, recompiling; other seeds differ', async (t) => {
  const make = (seed: number) => {
    const s = new weft.RandomStream(seed);
    return { s, outs: [s.uniform([4]), s.normal([2, 2]), s.integers([3], 0, 100)] };
  };
  const a = make(5);
  const b = make(5);
  const c = make(6);
  const fa = await weft.compile([], a.outs);
  const fb = await weft.compile([], b.outs);
  const fc = await weft.compile([], c.outs);
  const first = (await fa()).map(weft.tolist);
  t.same((await fb()).map(weft.tolist), first, 'another stream with the same seed');
  t.notSame((await fc()).map(weft.tolist), first, 'another seed');
  const second = (await fa()).map(weft.tolist);
  t.notSame(second, first, 'a second call draws new numbers');
  t.notSame(first[0], first[1], 'the draws of one stream are not alike');
  a.s.seed(5);
  t.same((await fa()).map(weft.tolist), first, 're-seeded: the first draws again');
  const again = await weft.compile([], a.outs);
  t.same((await again()).map(weft.tolist), second, 'a recompiled function continues from the states');
  a.s.seed(5);
  t.same((await again()).map(weft.tolist), first, 're-seeded and recompiled: the first draws');
  t.equal(a.s.stateUpdates.length, 3, 'one state per draw');
  t.ok(a.s.stateUpdates.every(([s, next]) => s.defaultUpdate === next && s.type instanceof weft.RandomStateType), 'each state updates to its next state');
  t.equal(String(a.s.stateUpdates[0]![0].type), 'RandomStateType');
});

t.test('default updates through compile: fresh draws per call, explicit updates first, turned off', async (t) => {
  const stream = new weft.RandomStream(21);
  const x = pt.vector('x');
  const d = stream.normal(pt.shape(x));
  const state = stateOf(d);
  const y = x.add(d);
  const fn = await weft.compile([x], y);
  t.same(fn.updated, [state], 'the state is updated by default');
  t.equal(fn.fgraph.outputs.length, 2, 'outputs then the update value');
  const v0 = weft.tolist(state.getValue());
  const [p, q] = [flat(await fn([0, 0, 0])), flat(await fn([0, 0, 0]))];
  t.notSame(p, q, 'two calls, two draws');
  t.notSame(weft.tolist(state.getValue()), v0, 'the state moved');

  // A failing call changes no state.
  const before = weft.tolist(state.getValue());
  await t.rejects(fn([[0]]));
  t.same(weft.tolist(state.getValue()), before, 'a failed call leaves the state');

  const kept = await weft.compile([x], y, { updates: [[state, state]] });
  t.same(kept.updated, [state], 'an explicit update of the state is the only one');
  t.same(flat(await kept([0, 0])), flat(await kept([0, 0])), 'explicit updates take precedence: the state stays');
  const off = await weft.compile([x], y, { noDefaultUpdates: true });
  t.same(off.updated, [], 'noDefaultUpdates: true');
  t.same(flat(await off([1, 1])), flat(await off([1, 1])), 'without default updates the draws repeat');
  const e = stream.uniform([2]);
  const some = await weft.compile([x], [y, e], { noDefaultUpdates: [state] });
  t.same(some.updated, [stateOf(e)], 'noDefaultUpdates lists the variables left out');
  const given = await weft.compile([x], y, { givens: [[state, pt.constant(weft.randomState(3))]] });
  t.same(given.updated, [], 'a state replaced through givens is not updated');
  t.same(flat(await given([0])), flat(await given([0])), 'the given state gives the same draws each call');

  // A plain shared variable with a default update (a counter).
  const count = weft.shared(0, { name: 'count' });
  count.defaultUpdate = count.add(1);
  const tick = await weft.compile([], count.mul(10));
  t.same([weft.tolist(await tick()), weft.tolist(await tick()), weft.tolist(count.getValue())], [0, 10, 2]);
  await throwsExactly(t, () => { count.defaultUpdate = pt.vector('v'); }, TypeError,
    'shared variable count: the default update v has type TensorType(float64, (?,)), the variable has type TensorType(float64, ())');
  await throwsExactly(t, () => weft.compile([], y.sum(), { noDefaultUpdates: 'yes' as unknown as boolean }), TypeError,
    'compile (the function): noDefaultUpdates must be a boolean or an array of shared variables, got yes');
});

t.test('shapes: static, symbolic, 0-d and empty; inferShape', async (t) => {
  const stream = new weft.RandomStream(31);
  const m = pt.matrix('m');
  const n = pt.scalar('n', 'int32');
  const stat = stream.uniform([2, 3]);
  t.same(stat.type.shape, [2, 3], 'static lengths give a static shape');
  const sym = stream.normal([m.shape.get(1), 2, n]);
  t.same(sym.type.shape, [null, 2, null]);
  const like = stream.integers(m.shape, 0, 5);
  t.same(like.type.shape, [null, null]);
  const scalar = stream.normal([]);
  t.same(scalar.type.shape, []);
  const empty = stream.uniform([0, 3]);
  const vec = stream.uniform(pt.constant([4, 1], { dtype: 'int32' }));
  t.same(vec.type.shape, [null, null], 'a vector of lengths');
  const fn = await weft.compile([m, n], [stat, sym, like, scalar, empty, vec]);
  const outs = await fn(weft.tolist(new weft.Rng(1).normal([3, 5])) as number[][], 4);
  t.same(outs.map((o) => o.shape), [[2, 3], [5, 2, 4], [3, 5], [], [0, 3], [4, 1]]);
  t.equal(await weft.checkInferShape([m, n], [sym], [new weft.Rng(2).normal([2, 6]), 3], weft.NormalRV), 1);
  t.equal(await weft.checkInferShape([m], [like], [new weft.Rng(2).normal([4, 1])], weft.IntegersRV), 1);
  t.equal(await weft.checkInferShape([], [stat, empty], [], weft.UniformRV), 2);
  const node = sym.owner!;
  t.same(node.op.outputShapes!(node, [weft.randomState(1), ...[7, 2, 3].map((k) => weft.pt.constant(k, { dtype: 'int32' }).data), weft.pt.constant(0).data, weft.pt.constant(1).data]), [[4], [7, 2, 3]],
    'outputShapes from the lengths');
});

t.test('parameters broadcast to the draws, any layout', async (t) => {
  const stream = new weft.RandomStream(41);
  const low = pt.vector('low');
  const high = pt.matrix('high');
  const d = stream.uniform([2, 3], { low, high: high.T });
  const fn = await weft.compile([low, high], d);
  const lows = [0, 10, 100];
  const highs = [[1, 20], [11, 21], [101, 201]];
  const v = weft.tolist(await fn(lows, highs)) as number[][];
  v.forEach((row, i) => row.forEach((x, j) => t.ok(x >= lows[j]! && x < highs[j]![i]!, `[${i}, ${j}] ${x} in [${lows[j]}, ${highs[j]![i]})`)));
  // Each element is drawn with its own bounds, in C order of the draws.
  stream.seed(41);
  const s0 = weft.tolist(stateOf(d).getValue()) as number[];
  const want = [0, 1].map((i) => [0, 1, 2].map((j) => lows[j]! + (highs[j]![i]! - lows[j]!) * new ElementRef(s0, 3 * i + j).double()));
  near(t, await fn(lows, highs), want, 1e-15, 'per-element bounds');
  const mu = pt.tensor({ shape: [1, 3], name: 'mu' });
  const z = stream.normal([4, 3], { mean: mu, std: 0 });
  const zv = weft.tolist(await (await weft.compile([mu], z))([[1, 2, 3]])) as number[][];
  t.same(zv, [[1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]], 'a mean broadcast along axis 0');
});

t.test('the draws run on the workers, cut into tasks, bit for bit the same on 0, 1 and 2 workers', async (t) => {
  const results: weft.NdArray[][] = [];
  const threads: Array<Set<number>> = [];
  for (const workers of [0, 1, 2]) {
    const stream = new weft.RandomStream(51);
    const x = pt.matrix('x');
    const noise = stream.normal(pt.shape(x), { std: 0.1 });
    const mask = stream.uniform(pt.shape(x)).lt(0.5);
    const y = pt.where(mask, x.add(noise).exp(), 0);
    const fn = await weft.compile([x], [y, y.sum({ axis: 1 }), stream.integers([5], 0, 9)], { workers, profile: true });
    const xv = new weft.Rng(3).normal([600, 600]);
    results.push([...(await fn(xv)), ...(await fn(xv))]);
    threads.push(new Set(fn.profile!.events.filter((e) => e.node.op instanceof weft.RandomVariable).map((e) => e.thread)));
    if (workers === 2) t.ok(fn.profile!.events.some((e) => e.thread > 0), 'some tasks ran in workers');
    fn.dispose();
  }
  for (const other of results.slice(1)) {
    results[0]!.forEach((v, i) => {
      const p = Array.from(v.data);
      const q = Array.from(other[i]!.data);
      t.ok(p.length === q.length && p.every((e, k) => Object.is(e, q[k])), `output ${i} bitwise equal`);
    });
  }
  t.same([...threads[0]!], [0], 'workers 0: the calling thread draws');
  t.ok(threads[2]!.size === 2 && !threads[2]!.has(0), `2 workers: the draws ran on both workers (${[...threads[2]!]})`);
});

t.test('merging: equal draws from one state merge, draws from two states do not', async (t) => {
  const state = weft.shared(weft.randomState(9), { name: 's' });
  const op = new weft.UniformRV('float64', 1);
  t.ok(op.equals(new weft.UniformRV('float64', 1)), 'equal by props');
  t.notOk(op.equals(new weft.UniformRV('float32', 1)), 'dtype matters');
  t.notOk(op.equals(new weft.NormalRV('float64', 1)), 'the class matters');
  const [, a] = op.call(state, 3, 0, 1) as TV[];
  const [, b] = op.call(state, 3, 0, 1) as TV[];
  const fn = await weft.compile([], [a!, b!]);
  t.equal(fn.fgraph.toposort().filter((n) => n.op instanceof weft.RandomVariable).length, 1, 'one draw');
  const [va, vb] = await fn();
  t.same(weft.tolist(va!), weft.tolist(vb!), 'one state, the same numbers');
  const stream = new weft.RandomStream(1);
  const fn2 = await weft.compile([], [stream.uniform([3]), stream.uniform([3])]);
  t.equal(fn2.fgraph.toposort().filter((n) => n.op instanceof weft.RandomVariable).length, 2, 'two states, two draws');
});

t.test('gradients: through what draws multiply, and reparameterized through location and scale', async (t) => {
  const stream = new weft.RandomStream(61);
  const x = pt.vector('x');
  const mu = pt.scalar('mu');
  const d = stream.normal(pt.shape(x), { mean: mu });
  const g = weft.grad(x.mul(d).sum(), x);
  const fn = await weft.compile([x, mu], [g, d]);
  const [gv, dv] = await fn([1, 2, 3], 0.5);
  t.same(weft.tolist(gv!), weft.tolist(dv!), 'd/dx sum(x * draws) is the draws of the same call');
  const gm = await weft.compile([x, mu], weft.grad(d.sum(), mu) as TV);
  t.equal(weft.tolist(await gm([1, 2, 3], 0.5)), 3, 'd/dmu sum(mu + z) = the number of draws');
  const df = pt.scalar('df');
  const st = stream.studentT(df, 0, 1, { size: [3] });
  await throwsExactly(t, () => weft.grad(st.sum(), df), weft.NullGradientError,
    'grad: the gradient with respect to df is needed but the gradient of StudentTRV{dtype=float64, ndim=1} with respect to input 2 is undefined: random draws have no gradient with respect to their parameters');
  await throwsExactly(t, () => weft.Rop(st, df, pt.scalar('v')), Error, 'Rop: StudentTRV{dtype=float64, ndim=1} has no derivative with respect to df');
  const rm = await weft.compile([x, mu], [weft.Rop(d, mu, pt.constant(2)) as TV], { onUnusedInput: 'ignore' });
  t.same(weft.tolist((await rm([1, 2, 3], 0.5))[0]!), [2, 2, 2], 'Rop with respect to the mean: the tangent');
});

t.test('Rop through draws: the draws are constants of the call, states and lengths have no tangent', async (t) => {
  const stream = new weft.RandomStream(63);
  const x = pt.vector('x');
  const v = pt.vector('v');
  const d = stream.normal([3]);
  const y = x.mul(d).add(x.sqr());
  const r = weft.Rop(y, x, v) as TV;
  const fn = await weft.compile([x, v], [r, d]);
  const X = [0.5, -2, 3];
  const V = [1, 0.5, -0.25];
  const calls: number[][] = [];
  for (let i = 0; i < 2; i++) {
    const [rv, dv] = await fn(X, V);
    const draws = flat(dv!);
    calls.push(draws);
    near(t, rv!, V.map((vi, k) => vi * draws[k]! + 2 * X[k]! * vi), 1e-12, `call ${i}: v * draws + 2 x v`);
  }
  t.notSame(calls[0], calls[1], 'each call draws anew');
  // Against finite differences, with the state held still (no default updates).
  const still = { noDefaultUpdates: true } as const;
  const fy = await weft.compile([x], y, still);
  const fr = await weft.compile([x, v], r, still);
  const eps = 1e-6;
  const plus = flat(await fy(X.map((a, k) => a + eps * V[k]!)));
  const minus = flat(await fy(X.map((a, k) => a - eps * V[k]!)));
  near(t, await fr(X, V), plus.map((p, k) => (p - minus[k]!) / (2 * eps)), 1e-7, 'finite differences');

  // A state or a length among wrt moves nothing (as grad gives them no gradient), where the draws'
  // rop would refuse; draws shaped by x do not move with x either.
  const n = pt.scalar('n', 'int32');
  const e = stream.uniform([n]);
  const z = e.mul(x.sum()).add(stream.normal(pt.shape(x)).mul(x));
  const state = stateOf(e);
  const rz = weft.Rop(z, [x, state, n], [v, pt.vector('w', 'uint32'), pt.scalar('vn', 'int32')]) as TV;
  const fz = await weft.compile([x, n, v], [rz, e, z.owner!.inputs[1]!.owner!.inputs[0] as TV], still);
  const [rzv, ev, nv] = await fz(X, 3, V);
  const sumV = V.reduce((p, q) => p + q, 0);
  const es = flat(ev!);
  const ns = flat(nv!);
  near(t, rzv!, es.map((u, k) => u * sumV + ns[k]! * V[k]!), 1e-12, 'uniform(n) * sum(v) + normal(shape(x)) * v');
  const onlyState = weft.Rop(e, state, pt.vector('w', 'uint32')) as TV;
  near(t, await (await weft.compile([n], onlyState, still))(2), [0, 0], 0, 'with respect to the state alone: zeros');
});

t.test('serialization: draws round-trip with their states and keep advancing', async (t) => {
  const seen = new Set<string>();
  const stream = new weft.RandomStream(71);
  const x = pt.vector('x');
  const y = x.mul(stream.normal(pt.shape(x), { mean: 1, dtype: 'float32' }).astype('float64'))
    .add(stream.uniform([3], { low: -1 }))
    .add(stream.integers([3], 0, 7, 'uint16').astype('float64'));
  const json = weft.serialize(y);
  for (const n of (JSON.parse(json) as { nodes: Array<{ op: { type: string } }> }).nodes) seen.add(n.op.type);
  const copy = weft.deserialize(json);
  if (copy.kind !== 'variables') throw new Error('expected a graph');
  t.equal(weft.serialize(copy.outputs), json, 'the copy serializes to the same document');
  t.equal(copy.shared.length, 3, 'three states');
  t.ok(copy.shared.every((s) => s.defaultUpdate !== undefined), 'each loaded state updates to its draw\'s next state');
  const f = await weft.compile([x], y);
  const g = await weft.compile(copy.inputs, copy.outputs[0]!);
  for (let i = 0; i < 3; i++) t.same(weft.tolist(await g([1, 2, 3])), weft.tolist(await f([1, 2, 3])), `call ${i}: the same draws`);
  // A compiled function's document keeps its updates.
  const doc = weft.deserialize(weft.serialize(f));
  if (doc.kind !== 'function') throw new Error('expected a function');
  t.equal(doc.updates.length, 3, 'the default updates are written as updates');
  const h = await weft.compile(doc.inputs, doc.outputs, { updates: doc.updates });
  t.same(weft.tolist((await h([1, 2, 3]))[0]!), weft.tolist(await f([1, 2, 3])), 'the loaded function draws the same');
  t.same(['UniformRV', 'NormalRV', 'IntegersRV'].filter((n) => !seen.has(n)), [], 'the three codecs of these draws were used (serialize-random reads every one)');
  const bad = json.replace('"dtype":"uint16","ndim":1', '"dtype":"float64","ndim":1');
  t.not(bad, json);
  await throwsExactly(t, () => weft.deserialize(bad), weft.DeserializeError,
    'nodes[6].op.props.dtype: expected one of "int8", "int16", "int32", "uint8", "uint16", "uint32", got "float64"');
});

t.test('bad input', async (t) => {
  const stream = new weft.RandomStream(81);
  const v = pt.vector('v');
  const state = weft.shared(weft.randomState(1), { name: 'state' });
  const op = new weft.UniformRV('float64', 1);
  await throwsExactly(t, () => new weft.RandomStream(-1), RangeError, 'RandomStream: the seed must be an integer from 0 to 4294967295, got -1');
  await throwsExactly(t, () => stream.seed(0.5), RangeError, 'RandomStream.seed: the seed must be an integer from 0 to 4294967295, got 0.5');
  await throwsExactly(t, () => weft.randomState(2 ** 32), RangeError, 'randomState: the seed must be an integer from 0 to 4294967295, got 4294967296');
  await throwsExactly(t, () => stream.uniform([2], { dtype: 'int32' }), TypeError, 'UniformRV: dtype must be float32 or float64, got int32');
  await throwsExactly(t, () => stream.normal([2], { dtype: 'uint8' }), TypeError, 'NormalRV: dtype must be float32 or float64, got uint8');
  await throwsExactly(t, () => stream.integers([2], 0, 2, 'float32'), TypeError, 'IntegersRV: dtype must be an integer dtype, got float32');
  await throwsExactly(t, () => new weft.NormalRV('float64', -1), RangeError, 'NormalRV: ndim must be an integer from 0 to 64, got -1');
  await throwsExactly(t, () => stream.integers([2], 3, 3), RangeError,
    'IntegersRV{dtype=int32, ndim=1}: low and high must be integers with low < high, got low=3 and high=3');
  await throwsExactly(t, () => stream.integers([2], 0, 300, 'uint8'), RangeError,
    'IntegersRV{dtype=uint8, ndim=1}: [0, 300) does not fit uint8 (integers from 0 to 255)');
  await throwsExactly(t, () => stream.uniform([2], { low: 1, high: 0 }), RangeError,
    'UniformRV{dtype=float64, ndim=1}: low and high must be finite with low <= high, got low=1 and high=0');
  await throwsExactly(t, () => stream.normal([2], { std: -1 }), RangeError, 'NormalRV{dtype=float64, ndim=1}: std must be non-negative, got -1');
  await throwsExactly(t, () => stream.uniform([2, -1]), RangeError, 'UniformRV{dtype=float64, ndim=2}: negative length -1 on axis 1 of the draws');
  await throwsExactly(t, () => stream.uniform([1.5]), TypeError, 'UniformRV{dtype=float64, ndim=1}: length 0 of the draws: expected an integer, got 1.5');
  await throwsExactly(t, () => stream.uniform(pt.matrix('q', 'int32')), TypeError,
    'RandomStream.uniform: a shape given as a variable must be a vector of static length, got q (TensorType(int32, (?, ?)))');
  await throwsExactly(t, () => stream.uniform([3], { low: pt.matrix('lo') }), TypeError,
    'UniformRV{dtype=float64, ndim=1}: low (TensorType(float64, (?, ?))) has more axes than the 1 of the draws');
  await throwsExactly(t, () => stream.uniform([3], { low: pt.constant([0, 1]) }), TypeError,
    'UniformRV{dtype=float64, ndim=1}: low (TensorType(float64, (2,))) does not broadcast to length 3 on axis 0 of the draws');
  await throwsExactly(t, () => stream.uniform([3], { high: pt.vector('b', 'bool') }), TypeError,
    'UniformRV{dtype=float64, ndim=1}: high must be numeric, got b (TensorType(bool, (?,)))');
  await throwsExactly(t, () => op.call(state, 3, 0), TypeError,
    'UniformRV{dtype=float64, ndim=1}: expected 4 inputs (the state, 1 length of the draws, low and high), got 3');
  await throwsExactly(t, () => op.call(v, 3, 0, 1), TypeError,
    'UniformRV{dtype=float64, ndim=1}: input 0 must be a random state (a uint32 vector of 4 words), got v (TensorType(float64, (?,)))');
  await throwsExactly(t, () => op.call(pt.tensor({ dtype: 'uint32', shape: [3], name: 'w' }), 3, 0, 1), TypeError,
    'UniformRV{dtype=float64, ndim=1}: input 0 must be a random state (a uint32 vector of 4 words), got w (TensorType(uint32, (3,)))');
  // Values checked at call time, in the node.
  const sd = pt.scalar('sd');
  const d = stream.normal([2], { std: sd });
  const fn = await weft.compile([sd], d);
  await throwsExactly(t, () => fn(-2), weft.NodeError,
    'NormalRV{dtype=float64, ndim=1}: std must be non-negative, got -2\n  in node 0: NormalRV{dtype=float64, ndim=1}(rng, TensorConstant{2}, TensorConstant{0}, sd)' +
      '\n  input values: uint32 [4], int32 [], int32 [], float64 []');
  const lo = pt.vector('lo');
  const u = stream.uniform([2, 3], { low: lo });
  const fu = await weft.compile([lo], u);
  await throwsExactly(t, () => fu([1, 2]), weft.NodeError,
    'UniformRV{dtype=float64, ndim=2}: low of shape [2] does not broadcast to the shape of the draws [2, 3]' +
      '\n  in node 0: UniformRV{dtype=float64, ndim=2}(rng, TensorConstant{2}, TensorConstant{3}, lo, TensorConstant{1})' +
      '\n  input values: uint32 [4], int32 [], int32 [], float64 [2], int32 []');
  // States are checked by their type, and by the op when they come as plain uint32 vectors.
  const s = stateOf(u);
  await throwsExactly(t, () => s.setValue(new Uint32Array([1, 2, 3])), weft.ValueTypeError,
    "shared variable rng: a random state holds 4 uint32 words (Philox's key and the stream's position), got 3");
  const plain = weft.shared(new Uint32Array(4), { name: 'plain' });
  const [, z] = op.call(plain, 2, 0, 1) as TV[];
  t.same(flat(await weft.compile([], z!).then((f) => f())), [0, 1].map((i) => new ElementRef([0, 0, 0, 0], i).double()), 'an all-zero state is a key and a position like any other');
  plain.setValue(new Uint32Array(5));
  await throwsExactly(t, () => weft.compile([], z!).then((f) => f()), weft.NodeError,
    'UniformRV{dtype=float64, ndim=1}: the state must hold 4 uint32 words, got shape [5]' +
      '\n  in node 0: UniformRV{dtype=float64, ndim=1}(plain, TensorConstant{2}, TensorConstant{0}, TensorConstant{1})' +
      '\n  input values: uint32 [5], int32 [], float64 [], float64 []');
});

t.teardown(() => weft.shutdown());
