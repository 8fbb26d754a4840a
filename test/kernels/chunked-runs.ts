// Helpers of the kernel tests: run a node's registered kernel through the registry on views,
// whole and in chunks, into outputs that sit at an offset inside sentinel-filled storage, and
// compare the bytes. A chunked run must equal the whole run bit for bit and touch nothing else.
import type { Test } from 'tap';
import type { Apply } from '../../src/graph/apply.js';
import type { KernelCall } from '../../src/graph/op.js';
import { STORAGE, type Dtype, type TypedArray } from '../../src/kernels/dtype.js';
import { getKernel } from '../../src/kernels/registry.js';
import { chunkUnits } from '../../src/scheduler/chunking.js';
import { contiguousStrides, sizeOf, type Range, type TensorView } from '../../src/kernels/view.js';
import { makeNdArray, type NdArray } from '../../src/tensor/core/ndarray.js';
import type { TensorType } from '../../src/tensor/core/type.js';
import { weft } from '../helpers.js';

/** Elements of padding before and after each output, which no kernel may write. */
const PAD = 3;

/** Numbers of chunks every kernel is split into. */
export const CHUNK_COUNTS = [1, 2, 3, 7] as const;

/** `units` cut into `chunks` consecutive ranges of near-equal length (some empty when units < chunks). */
export function evenRanges(units: number, chunks: number): Range[] {
  return [...Array(chunks).keys()].map((c) => ({ start: Math.floor((c * units) / chunks), end: Math.floor(((c + 1) * units) / chunks) }));
}

/** `units` cut at `cuts - 1` seeded random points (ranges may be empty). */
export function randomRanges(units: number, cuts: number, seed: number): Range[] {
  const r = new weft.Rng(seed);
  const points = [...Array(cuts - 1).keys()].map(() => Math.floor(r.random() * (units + 1))).sort((a, b) => a - b);
  const bounds = [0, ...points, units];
  return bounds.slice(1).map((end, i) => ({ start: bounds[i]!, end }));
}

interface Outputs {
  readonly views: TensorView[];
  readonly data: TypedArray[];
}

/** Outputs of these dtypes and shapes at offset PAD in storage whose every byte is `fill`. */
function sentinelOutputs(dtypes: readonly Dtype[], shapes: readonly (readonly number[])[], fill: number): Outputs {
  const data = shapes.map((s, j) => {
    const a = new STORAGE[dtypes[j]!](sizeOf(s) + 2 * PAD);
    new Uint8Array(a.buffer).fill(fill);
    return a;
  });
  return { data, views: shapes.map((s, j) => ({ data: data[j]!, offset: PAD, shape: s, stride: contiguousStrides(s) })) };
}

function bytesOf(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** The first element (of the padded storage) whose bytes differ, or -1. */
function firstDifference(a: TypedArray, b: TypedArray): number {
  const x = bytesOf(a);
  const y = bytesOf(b);
  if (x.length !== y.length) return 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return Math.floor(i / a.BYTES_PER_ELEMENT);
  return -1;
}

/** Are the padding elements of `a` still all `fill` bytes? */
function padIntact(a: TypedArray, fill: number): boolean {
  const b = bytesOf(a);
  const pad = PAD * a.BYTES_PER_ELEMENT;
  return [...b.subarray(0, pad), ...b.subarray(b.length - pad)].every((x) => x === fill);
}

export interface KernelRun {
  readonly call: KernelCall;
  readonly shapes: number[][];
  /** The outputs of one whole call (contiguous, without the padding). */
  readonly outputs: NdArray[];
}

/**
 * Runs `node`'s kernel on `inputs`: once whole (twice, over different sentinels, to see that it
 * writes every output element and no padding), then in 1, 2, 3 and 7 even chunks, one unit per
 * chunk and seeded random chunks, each run in reverse order; every chunked run must equal the
 * whole one bytewise, padding included.
 */
export function checkChunks(t: Test, node: Apply, inputs: readonly TensorView[], label: string): KernelRun {
  const op = node.op;
  const call = op.kernel!(node)!;
  const shapes = op.outputShapes!(node, inputs);
  const dtypes = node.outputs.map((o) => (o.type as TensorType).dtype);
  const kernel = getKernel(call.name);
  const run = (ranges: readonly (Range | undefined)[], fill: number): TypedArray[] => {
    const outs = sentinelOutputs(dtypes, shapes, fill);
    for (const r of [...ranges].reverse()) kernel(inputs, outs.views, call.params, r);
    return outs.data;
  };
  const whole = run([undefined], 0xa5);
  const other = run([undefined], 0x5a);
  const unwritten = whole.flatMap((d, j) => {
    const a = d.slice(PAD, d.length - PAD);
    const b = other[j]!.slice(PAD, d.length - PAD);
    const at = firstDifference(a, b);
    return at >= 0 ? [`output ${j} element ${at}`] : [];
  });
  t.same(unwritten, [], `${label}: one call writes every output element`);
  t.ok(whole.every((d) => padIntact(d, 0xa5)), `${label}: one call writes nothing around its outputs`);
  const units = chunkUnits(call.chunking, shapes[0]!);
  const splits: Array<{ name: string; ranges: Range[] }> = CHUNK_COUNTS.map((c) => ({ name: `${c} chunks`, ranges: evenRanges(units, c) }));
  splits.push({ name: 'random chunks', ranges: randomRanges(units, 5, units + 17) });
  if (units > 1) splits.push({ name: 'one unit per chunk', ranges: evenRanges(units, units) });
  const bad: string[] = [];
  for (const s of splits) {
    run(s.ranges, 0xa5).forEach((d, j) => {
      const at = firstDifference(d, whole[j]!);
      if (at >= 0) bad.push(`${s.name}: output ${j} differs at element ${at - PAD} (${d[at]} vs ${whole[j]![at]})`);
    });
  }
  t.same(bad, [], `${label}: chunked runs (${units} units by ${call.chunking.by}) equal one call bitwise`);
  const outputs = whole.map((d, j) => makeNdArray(d.slice(PAD, d.length - PAD), shapes[j]!));
  return { call, shapes, outputs };
}

/** The elements of a view in C order. */
export function elementsOf(v: TensorView): number[] {
  const out: number[] = [];
  const n = sizeOf(v.shape);
  for (let i = 0; i < n; i++) {
    let p = v.offset;
    let rem = i;
    for (let k = v.shape.length - 1; k >= 0; k--) {
      const idx = rem % v.shape[k]!;
      rem = (rem - idx) / v.shape[k]!;
      p += idx * v.stride[k]!;
    }
    out.push(v.data[p]!);
  }
  return out;
}

/** `a` and `b` have the same shape, storage class and elements (Object.is: -0 and NaN count). */
export function sameElements(t: Test, a: TensorView, b: TensorView, msg: string): void {
  t.same([...a.shape], [...b.shape], `${msg}: shape`);
  t.equal(a.data.constructor.name, b.data.constructor.name, `${msg}: storage`);
  const x = elementsOf(a);
  const y = elementsOf(b);
  const bad = x.flatMap((v, i) => (Object.is(v, y[i]) ? [] : [`[${i}] ${v} vs ${y[i]}`])).slice(0, 5);
  t.same(bad, [], `${msg}: elements`);
}
