// WebAssembly SIMD blocks of reductions (sum, prod, max, min, all, any) over float32, float64,
// int32 or uint8 (and bool) views in the arena, accumulating in float64 as reduce.ts does, in the
// same order as its JS blocks:
// - a reduced contiguous row folds into eight partials (element j into partial j mod 8); the
//   accumulator gets them combined as ((s0+s2)+(s4+s6)) + ((s1+s3)+(s5+s7)), then the tail of
//   fewer than eight one by one;
// - a kept contiguous row under a reduced axis adds each row into the accumulators in row order.
// max and min are IEEE's maximum and minimum (NaN wins, +0 above -0): independent of order, so
// float32 ones run in float32 lanes; all and any are the minimum and maximum of each element's
// truth (1 unless it is 0: NaN is true), so bytes' run on sixteen-byte vectors.
import { ROW_PARTIALS } from './row-partials.js';
import { Body, F64, HIGH_HALF, I32, LOW_HALVES, ModuleBuilder, V128, type Op } from './wasm-emit.js';
import { instanceFor } from './wasm-instances.js';

export type WasmReduceKind = 'sum' | 'prod' | 'max' | 'min' | 'all' | 'any';
/** The element types read (bools are uint8 bytes 0 and 1). */
export type WasmReduceDtype = 'float32' | 'float64' | 'int32' | 'uint8';

/** What each kind's partials start from. */
const IDENTITY: Readonly<Record<WasmReduceKind, number>> = { sum: 0, prod: 1, max: -Infinity, min: Infinity, all: 1, any: 0 };
/** Bytes per element. */
const SIZE: Readonly<Record<WasmReduceDtype, number>> = { float32: 4, float64: 8, int32: 4, uint8: 1 };


/**
 * Reduced rows: for r < rows, acc[a] = fold(acc[a], row r) where row r has `n` elements from
 * byte address p + r * rowStep and its accumulator is at byte address a + r * accStep.
 */
type Rows = (p: number, rows: number, rowStep: number, n: number, a: number, accStep: number) => void;
/** Kept rows: for r < rows, acc[j] = acc[j] (op) row r [j], j < n, rows `rowStep` bytes apart. */
type Columns = (p: number, rows: number, rowStep: number, n: number, a: number) => void;

export interface ReduceBlocks {
  readonly rows: Rows;
  readonly columns: Columns;
  /** For max and min: the argmax or argmin of reduced rows. */
  readonly argRows?: ArgRows;
}

const BINARY: Record<WasmReduceKind, 'add' | 'mul' | 'max' | 'min'> = { sum: 'add', prod: 'mul', max: 'max', min: 'min', all: 'min', any: 'max' };

/**
 * Pushes two input elements from the address on the stack (plus `offset` bytes) as an f64x2
 * (converted exactly), or their truths (1 or 0) for all and any.
 */
function loadPair(body: Body, kind: WasmReduceKind, dtype: WasmReduceDtype, offset: number): void {
  if (dtype === 'float64') body.v128Load(offset);
  else if (dtype === 'float32') body.mem('v128.load64_zero', offset).op('f64x2.promote_low_f32x4');
  else if (dtype === 'int32') body.mem('v128.load64_zero', offset).op('f64x2.convert_low_i32x4_s');
  else body.mem('v128.load16_splat', offset).op('i16x8.extend_low_i8x16_u', 'i32x4.extend_low_i16x8_u', 'f64x2.convert_low_i32x4_s');
  if (kind === 'all' || kind === 'any') body.f64x2(0).op('f64x2.ne').f64x2(1).op('v128.and');
}

/** Pushes one input element from the address on the stack as an f64 (or its truth, for all and any). */
function loadOne(body: Body, kind: WasmReduceKind, dtype: WasmReduceDtype): void {
  if (dtype === 'float64') body.mem('f64.load');
  else if (dtype === 'float32') body.mem('f32.load').op('f64.promote_f32');
  else body.mem(dtype === 'int32' ? 'i32.load' : 'i32.load8_u').op('f64.convert_i32_s');
  if (kind === 'all' || kind === 'any') body.f64(0).op('f64.ne', 'f64.convert_i32_s');
}

/** The parameters of the rows and columns blocks (see Rows and Columns), by index. */
const [P, ROWS, ROW_STEP, N, A, ACC_STEP] = [0, 1, 2, 3, 4, 5];

/** A rows block: `row` for each row (it folds the row at P into the accumulator at A), then the next. */
function eachRow(row: (body: Body) => void): Body {
  const body = new Body([I32, I32, I32, I32, I32, I32]);
  body.block().loop();
  body.get(ROWS).i32Eqz().brIf(1);
  row(body);
  body.get(P).get(ROW_STEP).i32Add().set(P);
  body.get(A).get(ACC_STEP).i32Add().set(A);
  body.get(ROWS).i32(1).i32Sub().set(ROWS).br(0);
  body.end().end();
  return body;
}

function rowsBody(kind: WasmReduceKind, dtype: WasmReduceDtype): Body {
  if (dtype === 'float32' && (kind === 'max' || kind === 'min')) return rowsExtremes32(kind);
  if (dtype === 'uint8' && (kind === 'all' || kind === 'any')) return rowsTruths8(kind);
  const op = (shape: 'f64x2' | 'f64'): Op => `${shape}.${BINARY[kind]}` as Op;
  const size = SIZE[dtype];
  return eachRow((body) => {
    const q = body.local(I32);
    const end8 = body.local(I32);
    const end = body.local(I32);
    const acc = [body.local(V128), body.local(V128), body.local(V128), body.local(V128)];
    const t = body.local(F64);
    const combined = body.local(V128);
    for (const x of acc) body.f64x2(IDENTITY[kind]).set(x);
    body.get(P).set(q);
    body.get(P).get(N).i32(-ROW_PARTIALS).op('i32.and').i32(size).op('i32.mul').i32Add().set(end8);
    body.get(P).get(N).i32(size).op('i32.mul').i32Add().set(end);
    // Eight elements a pass, partial j mod 8 in lane (j mod 2) of accumulator floor((j mod 8) / 2).
    body.block().loop();
    body.get(q).get(end8).op('i32.ge_u').brIf(1);
    acc.forEach((x, k) => {
      body.get(x).get(q);
      loadPair(body, kind, dtype, 2 * k * size);
      body.op(op('f64x2')).set(x);
    });
    body.get(q).i32(ROW_PARTIALS * size).i32Add().set(q).br(0);
    body.end().end();
    // ((s0+s2)+(s4+s6)) in lane 0 and ((s1+s3)+(s5+s7)) in lane 1, then lane 0 (op) lane 1.
    body.get(acc[0]!).get(acc[1]!).op(op('f64x2')).get(acc[2]!).get(acc[3]!).op(op('f64x2')).op(op('f64x2')).set(combined);
    body.get(A).mem('f64.load');
    body.get(combined).lane('f64x2.extract_lane', 0).get(combined).lane('f64x2.extract_lane', 1).op(op('f64')).op(op('f64')).set(t);
    body.block().loop();
    body.get(q).get(end).op('i32.ge_u').brIf(1);
    body.get(t).get(q);
    loadOne(body, kind, dtype);
    body.op(op('f64')).set(t);
    body.get(q).i32(size).i32Add().set(q).br(0);
    body.end().end();
    body.get(A).get(t).mem('f64.store');
  });
}

/**
 * Folds the 64-byte blocks from address `q` (a local, left past them) up to `end` (a local) into
 * four independent vectors that start as `init` pushes, `fold`ing each block's four vectors in,
 * and leaves the four combined on the stack.
 */
export function foldBlocks64(body: Body, q: number, end: number, init: () => void, fold: Op): void {
  const acc = [body.local(V128), body.local(V128), body.local(V128), body.local(V128)];
  for (const x of acc) {
    init();
    body.set(x);
  }
  body.block().loop();
  body.get(q).get(end).op('i32.ge_u').brIf(1);
  acc.forEach((x, k) => body.get(x).get(q).v128Load(16 * k).op(fold).set(x));
  body.get(q).i32(64).i32Add().set(q).br(0);
  body.end().end();
  body.get(acc[0]!).get(acc[1]!).op(fold).get(acc[2]!).get(acc[3]!).op(fold).op(fold);
}

/**
 * The rows block of float32 maxima and minima: in float32 lanes, sixteen elements a step in four
 * independent vectors (the extremes of float32 values are float32 values, exact in any order, so
 * the result is the float64 lanes' one), then the rest one by one, and the row's extreme folded
 * into its accumulator in float64.
 */
function rowsExtremes32(kind: 'max' | 'min'): Body {
  const lanes: Op = `f32x4.${kind}`;
  const one: Op = `f64.${kind}`;
  return eachRow((body) => {
    const q = body.local(I32);
    const end16 = body.local(I32);
    const end = body.local(I32);
    const extremes = body.local(V128);
    const t = body.local(F64);
    body.get(P).set(q);
    body.get(P).get(N).i32(-16).op('i32.and').i32(2).op('i32.shl').i32Add().set(end16);
    body.get(P).get(N).i32(2).op('i32.shl').i32Add().set(end);
    foldBlocks64(body, q, end16, () => body.f32x4(IDENTITY[kind]), lanes);
    body.set(extremes);
    body.get(A).mem('f64.load');
    for (let lane = 0; lane < 4; lane++) body.get(extremes).lane('f32x4.extract_lane', lane).op('f64.promote_f32', one);
    body.set(t);
    body.block().loop();
    body.get(q).get(end).op('i32.ge_u').brIf(1);
    body.get(t).get(q).mem('f32.load').op('f64.promote_f32', one).set(t);
    body.get(q).i32(4).i32Add().set(q).br(0);
    body.end().end();
    body.get(A).get(t).mem('f64.store');
  });
}

/**
 * The rows block of all and any over bytes (bools): sixteen bytes a vector, sixty-four a step in
 * four independent vectors: any ors them (some byte not zero), all takes their unsigned minimum
 * (no byte zero); then the rest one by one, and the row's truth folded into its accumulator.
 */
function rowsTruths8(kind: 'all' | 'any'): Body {
  const fold: Op = kind === 'any' ? 'v128.or' : 'i8x16.min_u';
  return eachRow((body) => {
    const q = body.local(I32);
    const end64 = body.local(I32);
    const end = body.local(I32);
    const truth = body.local(I32);
    body.get(P).set(q);
    body.get(P).get(N).i32(-64).op('i32.and').i32Add().set(end64);
    body.get(P).get(N).i32Add().set(end);
    foldBlocks64(body, q, end64, () => body.i32x4(kind === 'any' ? 0 : -1), fold);
    body.op(kind === 'any' ? 'v128.any_true' : 'i8x16.all_true').set(truth);
    body.block().loop();
    body.get(q).get(end).op('i32.ge_u').brIf(1);
    body.get(truth).get(q).mem('i32.load8_u').i32(0).op('i32.ne').op(kind === 'any' ? 'i32.or' : 'i32.and').set(truth);
    body.get(q).i32(1).i32Add().set(q).br(0);
    body.end().end();
    body.get(A).get(A).mem('f64.load').get(truth).op('f64.convert_i32_s').op(kind === 'any' ? 'f64.max' : 'f64.min').mem('f64.store');
  });
}

/**
 * Rows a pass of the columns block folds into each accumulator (in row order, as the JS block):
 * with more rows a pass, each accumulator is loaded and stored less often, while max and min
 * (several instructions each in f64x2 lanes) run out of registers beyond four. Measured on
 * 4096x4096 float32 sums (one thread, four elements a step): 4 rows 12.9 GB/s, 8 rows 14.0; on
 * 2048x2048 float32 maxima: 4 rows 5.5-6.0, 8 rows 4.5-4.7.
 */
const ROWS_PER_PASS: Readonly<Record<WasmReduceKind, number>> = { sum: 8, prod: 8, max: 4, min: 4, all: 4, any: 4 };

function columnsBody(kind: WasmReduceKind, dtype: WasmReduceDtype): Body {
  if (dtype === 'float32' && (kind === 'max' || kind === 'min')) return columnsExtremes32(kind);
  if (dtype === 'uint8' && (kind === 'all' || kind === 'any')) return columnsTruths8(kind);
  const perPass = ROWS_PER_PASS[kind];
  const op = (shape: 'f64x2' | 'f64'): Op => `${shape}.${BINARY[kind]}` as Op;
  const size = SIZE[dtype];
  const body = new Body([I32, I32, I32, I32, I32]);
  const j = body.local(I32);
  const y = body.local(I32);
  const pairs = body.local(I32);
  const row = Array.from({ length: perPass }, () => body.local(I32));
  const quads = body.local(I32);
  const v = body.local(V128);
  const w = body.local(V128);
  const t = body.local(F64);
  body.get(N).i32(-2).op('i32.and').set(pairs);
  body.get(N).i32(-4).op('i32.and').set(quads);
  /**
   * One pass over the accumulators with `count` rows, from row[0] on: four elements a step (two
   * accumulator vectors: one address update a row per four elements), then two, then the odd one.
   */
  const pass = (count: number): void => {
    for (let k = 1; k < count; k++) body.get(row[k - 1]!).get(ROW_STEP).i32Add().set(row[k]!);
    body.i32(0).set(j);
    body.get(A).set(y);
    body.block().loop();
    body.get(j).get(quads).op('i32.ge_u').brIf(1);
    body.get(y).v128Load().set(v);
    body.get(y).v128Load(16).set(w);
    for (let k = 0; k < count; k++) {
      body.get(v).get(row[k]!);
      loadPair(body, kind, dtype, 0);
      body.op(op('f64x2')).set(v);
      body.get(w).get(row[k]!);
      loadPair(body, kind, dtype, 2 * size);
      body.op(op('f64x2')).set(w);
      body.get(row[k]!).i32(4 * size).i32Add().set(row[k]!);
    }
    body.get(y).get(v).v128Store();
    body.get(y).get(w).v128Store(16);
    body.get(y).i32(32).i32Add().set(y);
    body.get(j).i32(4).i32Add().set(j).br(0);
    body.end().end();
    body.block().loop();
    body.get(j).get(pairs).op('i32.ge_u').brIf(1);
    body.get(y).v128Load().set(v);
    for (let k = 0; k < count; k++) {
      body.get(v).get(row[k]!);
      loadPair(body, kind, dtype, 0);
      body.op(op('f64x2')).set(v);
      body.get(row[k]!).i32(2 * size).i32Add().set(row[k]!);
    }
    body.get(y).get(v).v128Store();
    body.get(y).i32(16).i32Add().set(y);
    body.get(j).i32(2).i32Add().set(j).br(0);
    body.end().end();
    body.block();
    body.get(j).get(N).op('i32.ge_u').brIf(0);
    body.get(y).mem('f64.load').set(t);
    for (let k = 0; k < count; k++) {
      body.get(t).get(row[k]!);
      loadOne(body, kind, dtype);
      body.op(op('f64')).set(t);
    }
    body.get(y).get(t).mem('f64.store');
    body.end();
  };
  // Passes of perPass rows, then the rest one by one.
  body.block().loop();
  body.get(ROWS).i32(perPass).op('i32.lt_u').brIf(1);
  body.get(P).set(row[0]!);
  pass(perPass);
  body.get(P).get(ROW_STEP).i32(perPass).op('i32.mul').i32Add().set(P);
  body.get(ROWS).i32(perPass).i32Sub().set(ROWS).br(0);
  body.end().end();
  body.block().loop();
  body.get(ROWS).i32Eqz().brIf(1);
  body.get(P).set(row[0]!);
  pass(1);
  body.get(P).get(ROW_STEP).i32Add().set(P);
  body.get(ROWS).i32(1).i32Sub().set(ROWS).br(0);
  body.end().end();
  return body;
}

/** Where a columns block is in its pass: the column j, its accumulator's address y, the row walked down and the rows a pass. */
interface ColumnWalk {
  readonly j: number;
  readonly y: number;
  readonly row: number;
  readonly r: number;
  readonly count: number;
}

/** Emits: row = P + j elements of `size` bytes; for each of the pass's rows, `step` (at `row`), then the next row. */
function downRows(body: Body, at: ColumnWalk, size: number, step: () => void): void {
  body.get(P).get(at.j);
  if (size > 1) body.i32(Math.log2(size)).op('i32.shl');
  body.i32Add().set(at.row);
  body.i32(0).set(at.r);
  body.block().loop();
  body.get(at.r).get(at.count).op('i32.ge_u').brIf(1);
  step();
  body.get(at.row).get(ROW_STEP).i32Add().set(at.row);
  body.get(at.r).i32(1).i32Add().set(at.r).br(0);
  body.end().end();
}

/**
 * A columns block in passes of up to `perPass` rows: each pass runs `wide` for `width` columns
 * at a time (their accumulators from y on), then `narrow` for each column past a multiple of
 * `width`, and moves P on by its rows.
 */
function columnPasses(perPass: number, width: number, wide: (body: Body, at: ColumnWalk) => void, narrow: (body: Body, at: ColumnWalk) => void): Body {
  const body = new Body([I32, I32, I32, I32, I32]);
  const at: ColumnWalk = { j: body.local(I32), y: body.local(I32), row: body.local(I32), r: body.local(I32), count: body.local(I32) };
  const whole = body.local(I32);
  body.get(N).i32(-width).op('i32.and').set(whole);
  body.block().loop();
  body.get(ROWS).i32Eqz().brIf(1);
  body.get(ROWS).i32(perPass).get(ROWS).i32(perPass).op('i32.lt_u').op('select').set(at.count);
  body.i32(0).set(at.j);
  body.get(A).set(at.y);
  body.block().loop();
  body.get(at.j).get(whole).op('i32.ge_u').brIf(1);
  wide(body, at);
  body.get(at.y).i32(8 * width).i32Add().set(at.y);
  body.get(at.j).i32(width).i32Add().set(at.j).br(0);
  body.end().end();
  body.block().loop();
  body.get(at.j).get(N).op('i32.ge_u').brIf(1);
  narrow(body, at);
  body.get(at.y).i32(8).i32Add().set(at.y);
  body.get(at.j).i32(1).i32Add().set(at.j).br(0);
  body.end().end();
  body.get(P).get(ROW_STEP).get(at.count).op('i32.mul').i32Add().set(P);
  body.get(ROWS).get(at.count).i32Sub().set(ROWS).br(0);
  body.end().end();
  return body;
}

/** Rows a pass of the float32 extremes' columns block folds into each accumulator. */
const EXTREME_ROWS_PER_PASS = 8;

/**
 * The columns block of float32 maxima and minima: each pass takes eight accumulators at a time
 * into float32 lanes (they hold float32 values, or their infinities: exact) and folds eight rows
 * (or the rest) into them there, then back to float64; the accumulators past a multiple of eight
 * one by one.
 */
function columnsExtremes32(kind: 'max' | 'min'): Body {
  const lanes: Op = `f32x4.${kind}`;
  return columnPasses(
    EXTREME_ROWS_PER_PASS,
    8,
    (body, at) => {
      const [v, w] = [body.local(V128), body.local(V128)];
      // Four accumulators from byte `k` of y into float32 lanes, and back.
      const load4 = (k: number): void => {
        body.get(at.y).v128Load(k).op('f32x4.demote_f64x2_zero').get(at.y).v128Load(k + 16).op('f32x4.demote_f64x2_zero').shuffle(LOW_HALVES);
      };
      const store4 = (x: number, k: number): void => {
        body.get(at.y).get(x).op('f64x2.promote_low_f32x4').v128Store(k);
        body.get(at.y).get(x).get(x).shuffle(HIGH_HALF).op('f64x2.promote_low_f32x4').v128Store(k + 16);
      };
      load4(0);
      body.set(v);
      load4(32);
      body.set(w);
      // Two independent chains of extremes.
      downRows(body, at, 4, () => {
        body.get(v).get(at.row).v128Load().op(lanes).set(v);
        body.get(w).get(at.row).v128Load(16).op(lanes).set(w);
      });
      store4(v, 0);
      store4(w, 32);
    },
    (body, at) => {
      const t = body.local(F64);
      body.get(at.y).mem('f64.load').set(t);
      downRows(body, at, 4, () => body.get(t).get(at.row).mem('f32.load').op('f64.promote_f32', `f64.${kind}`).set(t));
      body.get(at.y).get(t).mem('f64.store');
    },
  );
}

/** Rows a pass of the bytes' all and any columns block folds, sixteen columns at a time. */
const TRUTH_ROWS_PER_PASS = 16;

/**
 * The columns block of all and any over bytes (bools): each pass folds up to sixteen rows of
 * sixteen columns at a time in byte lanes (or; unsigned minimum), then turns the sixteen truths
 * into float64 0 and 1, two at a time, and folds them into the accumulators; the columns past a
 * multiple of sixteen one by one.
 */
function columnsTruths8(kind: 'all' | 'any'): Body {
  const fold: Op = kind === 'any' ? 'v128.or' : 'i8x16.min_u';
  const into: Op = kind === 'any' ? 'f64x2.max' : 'f64x2.min';
  return columnPasses(
    TRUTH_ROWS_PER_PASS,
    16,
    (body, at) => {
      const v = body.local(V128);
      body.i32x4(kind === 'any' ? 0 : -1).set(v);
      downRows(body, at, 1, () => body.get(v).get(at.row).v128Load().op(fold).set(v));
      // Each byte's truth as 0 or 1, then bytes 2k and 2k + 1 as an f64x2 into accumulators 2k, 2k + 1.
      body.get(v).i32x4(0).op('i8x16.ne').i32(1).op('i8x16.splat', 'v128.and').set(v);
      for (let k = 0; k < 8; k++) {
        body.get(at.y);
        body.get(at.y).v128Load(16 * k);
        body.get(v);
        if (k > 0) body.get(v).shuffle([2 * k, 2 * k + 1, ...Array<number>(14).fill(0)]);
        body.op('i16x8.extend_low_i8x16_u', 'i32x4.extend_low_i16x8_u', 'f64x2.convert_low_i32x4_s', into).v128Store(16 * k);
      }
    },
    (body, at) => {
      const truth = body.local(I32);
      body.i32(kind === 'any' ? 0 : 1).set(truth);
      downRows(body, at, 1, () => body.get(truth).get(at.row).mem('i32.load8_u').i32(0).op('i32.ne').op(kind === 'any' ? 'i32.or' : 'i32.and').set(truth));
      body.get(at.y).get(at.y).mem('f64.load').get(truth).op('f64.convert_i32_s', kind === 'any' ? 'f64.max' : 'f64.min').mem('f64.store');
    },
  );
}

/** The module bytes of one kind and dtype's blocks, exported as `rows` and `columns`. */
export function reduceModuleBytes(kind: WasmReduceKind, dtype: WasmReduceDtype): Uint8Array<ArrayBuffer> {
  const module = new ModuleBuilder();
  module.export('rows', module.add(rowsBody(kind, dtype)));
  module.export('columns', module.add(columnsBody(kind, dtype)));
  if (kind === 'max' || kind === 'min') module.export('argRows', module.add(argRowsBody(kind, dtype)));
  return module.bytes();
}

/** The blocks of `kind` over `dtype` inputs for `memory`, compiled once and instantiated once per memory and thread. */
export function reduceBlocksFor(memory: WebAssembly.Memory, kind: WasmReduceKind, dtype: WasmReduceDtype): ReduceBlocks {
  return instanceFor(memory, `reduce|${kind}|${dtype}`, () => reduceModuleBytes(kind, dtype), (e) => ({ rows: e['rows'] as Rows, columns: e['columns'] as Columns, ...(e['argRows'] ? { argRows: e['argRows'] as ArgRows } : {}) }));
}

/**
 * Reduced rows for argmax (`max`) or argmin: for r < rows, (best[r], where[r]) as the JS block
 * leaves them after scanning row r from them, at positions q + j qs0 + r qs1: the first NaN wins
 * (and ends the scan), else the first extremum beyond the best so far. best[r] is a float64 at
 * byte address best + 8 r accStep, where[r] an int32 at where + 4 r accStep.
 */
type ArgRows = (p: number, rows: number, rowStep: number, n: number, best: number, where: number, accStep: number, q: number, qs0: number, qs1: number) => void;

/**
 * Two lanes each keep their first NaN or their first extremum and its position (-1 for none);
 * then the lanes are combined (a NaN before any number, the smaller position at a tie), the odd
 * element follows, and the row's result replaces the accumulator where the sequential scan would.
 */
function argRowsBody(kind: 'max' | 'min', dtype: WasmReduceDtype): Body {
  const size = SIZE[dtype];
  const beyond = kind === 'max' ? 'gt' : 'lt';
  const body = new Body([I32, I32, I32, I32, I32, I32, I32, I32, I32, I32]);
  const [P, ROWS, ROW_STEP, N, BEST, WHERE, ACC_STEP, Q, QS0, QS1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const [x, best, at, position, step, mask] = Array.from({ length: 6 }, () => body.local(V128));
  const [q, end2] = [body.local(I32), body.local(I32)];
  const [b0, b1, i0, i1, value, last, acc] = Array.from({ length: 7 }, () => body.local(F64));
  const pick = body.local(I32);
  /** mask = lanes (or the scalar) where `candidate` replaces `current`: current is a number, candidate beyond it or NaN. */
  const replaces = (shape: 'f64x2' | 'f64', candidate: number, current: number): void => {
    const or = shape === 'f64x2' ? 'v128.or' : 'i32.or';
    const and = shape === 'f64x2' ? 'v128.and' : 'i32.and';
    body.get(candidate).get(current).op(`${shape}.${beyond}` as Op).get(candidate).get(candidate).op(`${shape}.ne` as Op).op(or);
    body.get(current).get(current).op(`${shape}.eq` as Op).op(and);
  };
  body.block().loop();
  body.get(ROWS).i32Eqz().brIf(1);
  body.f64x2(kind === 'max' ? -Infinity : Infinity).set(best);
  body.f64x2(-1).set(at);
  body.get(Q).op('f64.convert_i32_s', 'f64x2.splat').get(Q).get(QS0).i32Add().op('f64.convert_i32_s').lane('f64x2.replace_lane', 1).set(position);
  body.get(QS0).i32(2).op('i32.mul').op('f64.convert_i32_s', 'f64x2.splat').set(step);
  body.get(P).set(q);
  body.get(P).get(N).i32(-2).op('i32.and').i32(size).op('i32.mul').i32Add().set(end2);
  body.block().loop();
  body.get(q).get(end2).op('i32.ge_u').brIf(1);
  body.get(q);
  loadPair(body, kind, dtype, 0);
  body.set(x);
  replaces('f64x2', x, best);
  body.set(mask);
  body.get(x).get(best).get(mask).op('v128.bitselect').set(best);
  body.get(position).get(at).get(mask).op('v128.bitselect').set(at);
  body.get(position).get(step).op('f64x2.add').set(position);
  body.get(q).i32(2 * size).i32Add().set(q).br(0);
  body.end().end();
  // Lane 1 wins if it holds a NaN and lane 0 none or a later one; else if neither holds a NaN
  // and lane 1's is beyond lane 0's, or equal at an earlier position.
  body.get(best).lane('f64x2.extract_lane', 0).set(b0).get(best).lane('f64x2.extract_lane', 1).set(b1);
  body.get(at).lane('f64x2.extract_lane', 0).set(i0).get(at).lane('f64x2.extract_lane', 1).set(i1);
  body.get(b0).get(b0).op('f64.ne').get(i1).get(i0).op('f64.lt').op('i32.and');
  body.get(b0).get(b0).op('f64.eq').op('i32.or');
  body.get(b1).get(b0).op(`f64.${beyond}` as Op).get(b1).get(b0).op('f64.eq').get(i1).get(i0).op('f64.lt').op('i32.and').op('i32.or');
  body.get(b0).get(b0).op('f64.eq').op('i32.and');
  body.get(b1).get(b1).op('f64.ne');
  body.op('select').set(pick);
  body.get(b1).get(b0).get(pick).op('select').set(value);
  body.get(i1).get(i0).get(pick).op('select').set(last);
  // The odd element, at position q + (n - 1) qs0.
  body.block();
  body.get(N).i32(1).op('i32.and').i32Eqz().brIf(0);
  body.get(end2);
  loadOne(body, kind, dtype);
  body.set(b1);
  replaces('f64', b1, value);
  body.set(pick);
  body.get(b1).get(value).get(pick).op('select').set(value);
  body.get(Q).get(N).i32(1).i32Sub().get(QS0).op('i32.mul').i32Add().op('f64.convert_i32_s').get(last).get(pick).op('select').set(last);
  body.end();
  // Into the accumulator, where the row replaced it: a position was taken, the best so far is a
  // number, and the row's is NaN or beyond it.
  body.get(BEST).mem('f64.load').set(acc);
  body.block();
  body.get(last).f64(0).op('f64.lt');
  body.get(acc).get(acc).op('f64.ne').op('i32.or');
  body.get(value).get(value).op('f64.eq').get(value).get(acc).op(`f64.${beyond}` as Op).op('i32.eqz').op('i32.and').op('i32.or');
  body.brIf(0);
  body.get(BEST).get(value).mem('f64.store');
  body.get(WHERE).get(last).op('i32.trunc_sat_f64_s').mem('i32.store');
  body.end();
  body.get(P).get(ROW_STEP).i32Add().set(P);
  body.get(BEST).get(ACC_STEP).i32(3).op('i32.shl').i32Add().set(BEST);
  body.get(WHERE).get(ACC_STEP).i32(2).op('i32.shl').i32Add().set(WHERE);
  body.get(Q).get(QS1).i32Add().set(Q);
  body.get(ROWS).i32(1).i32Sub().set(ROWS).br(0);
  body.end().end();
  return body;
}
