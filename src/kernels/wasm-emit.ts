// A tiny WebAssembly binary emitter: enough to write numeric kernels in TypeScript (no wat2wasm
// at build or run time). A module imports one shared memory ("env" "memory") and holds functions
// (exported or internal, calling one another by index) built from typed instruction methods and
// a table of plain opcodes (scalar i32/i64/f32/f64, conversions, and the SIMD lanes kernels use).

/** Value types. */
export const I32 = 0x7f;
export const I64 = 0x7e;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof I64 | typeof F32 | typeof F64 | typeof V128;

/** i8x16.shuffle lanes: bytes 8..15 of a v128 moved to 0..7 (32-bit lanes 2 and 3 to 0 and 1). */
export const HIGH_HALF: readonly number[] = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
/** i8x16.shuffle lanes: bytes 0..7 of the first v128, then 0..7 of the second (two halves of four 32-bit lanes). */
export const LOW_HALVES: readonly number[] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];

/** Unsigned LEB128 (section sizes, indices, counts, memory offsets). */
export function uleb(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 (i32.const immediates). */
export function sleb(value: number): number[] {
  const out: number[] = [];
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

/** Signed LEB128 of a 64-bit integer (i64.const immediates; wraps to the signed 64-bit range). */
export function sleb64(value: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asIntN(64, value);
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    const done = (v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

/** A length-prefixed vector of already-encoded items. */
function vec(items: readonly number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function name(text: string): number[] {
  const bytes = [...new TextEncoder().encode(text)];
  return [...uleb(bytes.length), ...bytes];
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

const simd = (op: number): number[] => [0xfd, ...uleb(op)];

/**
 * Instructions without immediates, by their text-format names (the WebAssembly spec's opcodes).
 * Only IEEE-exact operations are listed: no relaxed SIMD, whose results depend on the engine.
 */
const OPS = {
  unreachable: [0x00],
  drop: [0x1a],
  /** select: the first operand where the i32 condition is nonzero, else the second. */
  select: [0x1b],
  return: [0x0f],
  'i32.eqz': [0x45], 'i32.eq': [0x46], 'i32.ne': [0x47], 'i32.lt_s': [0x48], 'i32.lt_u': [0x49],
  'i32.gt_s': [0x4a], 'i32.gt_u': [0x4b], 'i32.le_s': [0x4c], 'i32.le_u': [0x4d], 'i32.ge_s': [0x4e], 'i32.ge_u': [0x4f],
  'i64.eqz': [0x50], 'i64.eq': [0x51], 'i64.ne': [0x52], 'i64.lt_s': [0x53], 'i64.lt_u': [0x54],
  'i64.gt_s': [0x55], 'i64.gt_u': [0x56], 'i64.le_s': [0x57], 'i64.le_u': [0x58], 'i64.ge_s': [0x59], 'i64.ge_u': [0x5a],
  'f32.eq': [0x5b], 'f32.ne': [0x5c], 'f32.lt': [0x5d], 'f32.gt': [0x5e], 'f32.le': [0x5f], 'f32.ge': [0x60],
  'f64.eq': [0x61], 'f64.ne': [0x62], 'f64.lt': [0x63], 'f64.gt': [0x64], 'f64.le': [0x65], 'f64.ge': [0x66],
  'i32.clz': [0x67], 'i32.add': [0x6a], 'i32.sub': [0x6b], 'i32.mul': [0x6c], 'i32.div_s': [0x6d], 'i32.rem_s': [0x6f],
  'i32.and': [0x71], 'i32.or': [0x72], 'i32.xor': [0x73], 'i32.shl': [0x74], 'i32.shr_s': [0x75], 'i32.shr_u': [0x76],
  'i64.clz': [0x79], 'i64.add': [0x7c], 'i64.sub': [0x7d], 'i64.mul': [0x7e], 'i64.and': [0x83], 'i64.or': [0x84],
  'i64.xor': [0x85], 'i64.shl': [0x86], 'i64.shr_s': [0x87], 'i64.shr_u': [0x88],
  'f32.abs': [0x8b], 'f32.neg': [0x8c], 'f32.ceil': [0x8d], 'f32.floor': [0x8e], 'f32.trunc': [0x8f], 'f32.nearest': [0x90],
  'f32.sqrt': [0x91], 'f32.add': [0x92], 'f32.sub': [0x93], 'f32.mul': [0x94], 'f32.div': [0x95], 'f32.min': [0x96],
  'f32.max': [0x97], 'f32.copysign': [0x98],
  'f64.abs': [0x99], 'f64.neg': [0x9a], 'f64.ceil': [0x9b], 'f64.floor': [0x9c], 'f64.trunc': [0x9d], 'f64.nearest': [0x9e],
  'f64.sqrt': [0x9f], 'f64.add': [0xa0], 'f64.sub': [0xa1], 'f64.mul': [0xa2], 'f64.div': [0xa3], 'f64.min': [0xa4],
  'f64.max': [0xa5], 'f64.copysign': [0xa6],
  'i32.wrap_i64': [0xa7], 'i64.extend_i32_s': [0xac], 'i64.extend_i32_u': [0xad],
  'f32.convert_i32_s': [0xb2], 'f32.demote_f64': [0xb6], 'f64.convert_i32_s': [0xb7], 'f64.convert_i64_s': [0xb9],
  'f64.promote_f32': [0xbb], 'i32.reinterpret_f32': [0xbc], 'i64.reinterpret_f64': [0xbd], 'f32.reinterpret_i32': [0xbe],
  'f64.reinterpret_i64': [0xbf],
  'i32.trunc_sat_f32_s': [0xfc, 0x00], 'i32.trunc_sat_f64_s': [0xfc, 0x02], 'i64.trunc_sat_f64_s': [0xfc, 0x06],
  'i8x16.splat': simd(0x0f), 'i32x4.splat': simd(0x11), 'i64x2.splat': simd(0x12), 'f32x4.splat': simd(0x13), 'f64x2.splat': simd(0x14),
  'i8x16.ne': simd(0x24), 'i8x16.all_true': simd(0x63), 'i8x16.min_u': simd(0x77),
  'i32x4.eq': simd(0x37), 'i32x4.ne': simd(0x38), 'i32x4.lt_s': simd(0x39), 'i32x4.gt_s': simd(0x3b), 'i32x4.le_s': simd(0x3d),
  'i32x4.ge_s': simd(0x3f),
  'f32x4.eq': simd(0x41), 'f32x4.ne': simd(0x42), 'f32x4.lt': simd(0x43), 'f32x4.gt': simd(0x44), 'f32x4.le': simd(0x45),
  'f32x4.ge': simd(0x46), 'f64x2.eq': simd(0x47), 'f64x2.ne': simd(0x48), 'f64x2.lt': simd(0x49), 'f64x2.gt': simd(0x4a),
  'f64x2.le': simd(0x4b), 'f64x2.ge': simd(0x4c),
  'v128.not': simd(0x4d), 'v128.and': simd(0x4e), 'v128.andnot': simd(0x4f), 'v128.or': simd(0x50), 'v128.xor': simd(0x51),
  /** v128.bitselect(a, b, mask): a's bits where the mask's are set, else b's. */
  'v128.bitselect': simd(0x52), 'v128.any_true': simd(0x53),
  'f32x4.demote_f64x2_zero': simd(0x5e), 'i8x16.narrow_i16x8_s': simd(0x65), 'i16x8.narrow_i32x4_s': simd(0x85),
  'i16x8.extend_low_i8x16_s': simd(0x87), 'i16x8.extend_low_i8x16_u': simd(0x89), 'i32x4.extend_low_i16x8_u': simd(0xa9), 'i32x4.abs': simd(0xa0), 'i32x4.neg': simd(0xa1), 'i32x4.extend_low_i16x8_s': simd(0xa7), 'f64x2.promote_low_f32x4': simd(0x5f),
  'f32x4.ceil': simd(0x67), 'f32x4.floor': simd(0x68), 'f32x4.trunc': simd(0x69), 'f32x4.nearest': simd(0x6a),
  'f64x2.ceil': simd(0x74), 'f64x2.floor': simd(0x75), 'f64x2.trunc': simd(0x7a), 'f64x2.nearest': simd(0x94),
  'i32x4.all_true': simd(0xa3), 'i32x4.shl': simd(0xab), 'i32x4.shr_s': simd(0xac), 'i32x4.shr_u': simd(0xad),
  'i32x4.add': simd(0xae), 'i32x4.sub': simd(0xb1), 'i32x4.mul': simd(0xb5), 'i32x4.min_s': simd(0xb6), 'i32x4.max_s': simd(0xb8),
  'i64x2.all_true': simd(0xc3), 'i64x2.extend_low_i32x4_s': simd(0xc7), 'i64x2.extend_high_i32x4_s': simd(0xc8),
  'i64x2.shl': simd(0xcb), 'i64x2.shr_s': simd(0xcc), 'i64x2.shr_u': simd(0xcd), 'i64x2.add': simd(0xce),
  'i64x2.sub': simd(0xd1), 'i64x2.mul': simd(0xd5), 'i64x2.eq': simd(0xd6), 'i64x2.ne': simd(0xd7), 'i64x2.lt_s': simd(0xd8),
  'i64x2.gt_s': simd(0xd9), 'i64x2.le_s': simd(0xda), 'i64x2.ge_s': simd(0xdb),
  'f32x4.abs': simd(0xe0), 'f32x4.neg': simd(0xe1), 'f32x4.sqrt': simd(0xe3), 'f32x4.add': simd(0xe4), 'f32x4.sub': simd(0xe5),
  'f32x4.mul': simd(0xe6), 'f32x4.div': simd(0xe7), 'f32x4.min': simd(0xe8), 'f32x4.max': simd(0xe9), 'f32x4.pmin': simd(0xea), 'f32x4.pmax': simd(0xeb),
  'f64x2.abs': simd(0xec), 'f64x2.neg': simd(0xed), 'f64x2.sqrt': simd(0xef), 'f64x2.add': simd(0xf0), 'f64x2.sub': simd(0xf1),
  'f64x2.mul': simd(0xf2), 'f64x2.div': simd(0xf3), 'f64x2.min': simd(0xf4), 'f64x2.max': simd(0xf5), 'f64x2.pmin': simd(0xf6), 'f64x2.pmax': simd(0xf7),
  'i32x4.trunc_sat_f32x4_s': simd(0xf8), 'f32x4.convert_i32x4_s': simd(0xfa), 'i32x4.trunc_sat_f64x2_s_zero': simd(0xfc),
  'f64x2.convert_low_i32x4_s': simd(0xfe),
} as const satisfies Record<string, readonly number[]>;

/** The name of an instruction without immediates. */
export type Op = keyof typeof OPS;

/** Lane access instructions (one lane-index immediate). */
const LANE_OPS = {
  'i32x4.extract_lane': 0x1b, 'i32x4.replace_lane': 0x1c, 'i64x2.extract_lane': 0x1d, 'i64x2.replace_lane': 0x1e,
  'f32x4.extract_lane': 0x1f, 'f32x4.replace_lane': 0x20, 'f64x2.extract_lane': 0x21, 'f64x2.replace_lane': 0x22,
} as const;
export type LaneOp = keyof typeof LANE_OPS;

/** Loads and stores: opcode bytes and the natural alignment (log2 of bytes). */
const MEMORY_OPS = {
  'i32.load8_u': [[0x2d], 0], 'i32.store8': [[0x3a], 0],
  'i32.load': [[0x28], 2], 'i64.load': [[0x29], 3], 'f32.load': [[0x2a], 2], 'f64.load': [[0x2b], 3],
  'i32.store': [[0x36], 2], 'i64.store': [[0x37], 3], 'f32.store': [[0x38], 2], 'f64.store': [[0x39], 3],
  'v128.load': [simd(0x00), 4], 'v128.store': [simd(0x0b), 4], 'v128.load32_splat': [simd(0x09), 2],
  'v128.load64_zero': [simd(0x5d), 3], 'v128.load32_zero': [simd(0x5c), 2], 'v128.load16_splat': [simd(0x08), 1],
} as const satisfies Record<string, readonly [readonly number[], number]>;
export type MemoryOp = keyof typeof MEMORY_OPS;

/** Loads and stores of one lane (a memory argument, then the lane index): opcode and natural alignment. */
const MEMORY_LANE_OPS = {
  'v128.load8_lane': [0x54, 0], 'v128.load32_lane': [0x56, 2], 'v128.load64_lane': [0x57, 3], 'v128.store16_lane': [0x59, 1], 'v128.store32_lane': [0x5a, 2],
} as const satisfies Record<string, readonly [number, number]>;
export type MemoryLaneOp = keyof typeof MEMORY_LANE_OPS;

function bytesOf(array: Float32Array | Float64Array | BigInt64Array | Int32Array): number[] {
  return [...new Uint8Array(array.buffer, array.byteOffset, array.byteLength)];
}

/**
 * A function body under construction: typed methods append instructions. Locals are declared
 * with `local` (after the parameters, which are locals 0..n-1).
 */
export class Body {
  readonly code: number[] = [];
  readonly #locals: ValType[] = [];
  /** Constants set once at entry, by their bytes: their locals (see hoistConstants). */
  #hoisted: Map<string, number> | undefined;
  readonly #prologue: number[] = [];

  constructor(
    readonly params: readonly ValType[],
    readonly results: readonly ValType[] = [],
  ) {}

  /**
   * From now on, v128 constants are locals set once at the function's entry: V8 builds a v128
   * constant with several instructions each time it is used, a cost inside a loop.
   */
  hoistConstants(): this {
    this.#hoisted ??= new Map();
    return this;
  }

  /** v128.const of 16 bytes, or the local holding it. */
  #v128(bytes: number[]): this {
    if (!this.#hoisted) return this.#op(...simd(0x0c), ...bytes);
    const key = bytes.join(',');
    let local = this.#hoisted.get(key);
    if (local === undefined) {
      local = this.local(V128);
      this.#hoisted.set(key, local);
      this.#prologue.push(...simd(0x0c), ...bytes, 0x21, ...uleb(local));
    }
    return this.get(local);
  }

  /** A new local of type `t`; returns its index. */
  local(t: ValType): number {
    this.#locals.push(t);
    return this.params.length + this.#locals.length - 1;
  }

  #op(...bytes: number[]): this {
    this.code.push(...bytes);
    return this;
  }

  /** Instructions without immediates, in order. */
  op(...names: Op[]): this {
    for (const n of names) this.code.push(...OPS[n]);
    return this;
  }

  get(i: number): this { return this.#op(0x20, ...uleb(i)); }
  set(i: number): this { return this.#op(0x21, ...uleb(i)); }
  tee(i: number): this { return this.#op(0x22, ...uleb(i)); }
  i32(v: number): this { return this.#op(0x41, ...sleb(v)); }
  i64(v: bigint): this { return this.#op(0x42, ...sleb64(v)); }
  f32(v: number): this { return this.#op(0x43, ...bytesOf(new Float32Array([v]))); }
  f64(v: number): this { return this.#op(0x44, ...bytesOf(new Float64Array([v]))); }
  /** v128.const with two float64 lanes. */
  f64x2(a: number, b = a): this { return this.#v128(bytesOf(new Float64Array([a, b]))); }
  /** v128.const with two int64 lanes. */
  i64x2(a: bigint, b = a): this { return this.#v128(bytesOf(new BigInt64Array([a, b]))); }
  /** v128.const with four float32 lanes. */
  f32x4(a: number, b = a, c = a, d = a): this { return this.#v128(bytesOf(new Float32Array([a, b, c, d]))); }
  /** v128.const with four int32 lanes. */
  i32x4(a: number, b = a, c = a, d = a): this { return this.#v128(bytesOf(new Int32Array([a, b, c, d]))); }
  /**
   * |x| (`abs`) or -x (`neg`) of the float value on the stack. In lanes, an and or xor of the
   * sign bit with a constant mask (hoisted when the body hoists constants): the bits of f32x4.abs
   * and friends, which V8 spends three instructions on, building the mask at each use.
   */
  signOp(op: 'abs' | 'neg', type: 'f32' | 'f64' | 'f32x4' | 'f64x2'): this {
    if (type === 'f32' || type === 'f64') return this.op(`${type}.${op}`);
    const sign = type === 'f32x4' ? this.i32x4(op === 'abs' ? 0x7fffffff : -0x80000000) : this.i64x2(op === 'abs' ? 0x7fffffffffffffffn : -0x8000000000000000n);
    return sign.op(op === 'abs' ? 'v128.and' : 'v128.xor');
  }
  /** i8x16.shuffle of the two v128 operands: byte i of the result is byte lanes[i] of (a ++ b). */
  shuffle(lanes: readonly number[]): this {
    if (lanes.length !== 16 || lanes.some((l) => !(l >= 0 && l < 32))) throw new Error(`shuffle: 16 byte lanes in [0, 32) expected, got [${lanes.join(', ')}]`);
    return this.#op(...simd(0x0d), ...lanes);
  }
  lane(op: LaneOp, lane: number): this { return this.#op(...simd(LANE_OPS[op]), lane); }
  /** A load or store with a constant byte offset and the natural alignment hint. */
  mem(op: MemoryOp, offset = 0): this {
    const [code, align] = MEMORY_OPS[op];
    return this.#op(...code, align, ...uleb(offset));
  }
  /** A load or store of lane `lane` of a v128 (the address first, then the vector). */
  memLane(op: MemoryLaneOp, lane: number, offset = 0): this {
    const [code, align] = MEMORY_LANE_OPS[op];
    return this.#op(...simd(code), align, ...uleb(offset), lane);
  }
  call(index: number): this { return this.#op(0x10, ...uleb(index)); }

  i32Add(): this { return this.op('i32.add'); }
  i32Sub(): this { return this.op('i32.sub'); }
  i32Eqz(): this { return this.op('i32.eqz'); }
  f32Eq(): this { return this.op('f32.eq'); }
  f32Add(): this { return this.op('f32.add'); }
  f32Mul(): this { return this.op('f32.mul'); }
  /** f32.load with a constant byte offset (alignment hint 4 bytes). */
  f32Load(offset = 0): this { return this.mem('f32.load', offset); }
  f32Store(offset = 0): this { return this.mem('f32.store', offset); }
  v128Load(offset = 0): this { return this.mem('v128.load', offset); }
  v128Store(offset = 0): this { return this.mem('v128.store', offset); }
  /** Loads one f32 and broadcasts it to the four lanes. */
  load32Splat(offset = 0): this { return this.mem('v128.load32_splat', offset); }
  f32x4Splat(): this { return this.op('f32x4.splat'); }
  f32x4Add(): this { return this.op('f32x4.add'); }
  f32x4Mul(): this { return this.op('f32x4.mul'); }
  /** Structured control: blocks without results, or with one result of type `t`. */
  block(t?: ValType): this { return this.#op(0x02, t ?? 0x40); }
  loop(t?: ValType): this { return this.#op(0x03, t ?? 0x40); }
  if(t?: ValType): this { return this.#op(0x04, t ?? 0x40); }
  else(): this { return this.#op(0x05); }
  end(): this { return this.#op(0x0b); }
  br(depth: number): this { return this.#op(0x0c, ...uleb(depth)); }
  brIf(depth: number): this { return this.#op(0x0d, ...uleb(depth)); }

  /**
   * Copies the bytes from local `dst` up to local `end` from local `src` on: 16 at a time, then
   * `size` (4 or 8) at a time; both locals are left past the run. (memory.copy costs more than it
   * saves on runs of a few hundred bytes: V8 calls out for it.)
   */
  copyRun(dst: number, src: number, end: number, size: 4 | 8): this {
    const [load, store] = size === 4 ? (['i32.load', 'i32.store'] as const) : (['i64.load', 'i64.store'] as const);
    this.block().loop();
    this.get(end).get(dst).i32Sub().i32(16).op('i32.lt_s').brIf(1);
    this.get(dst).get(src).v128Load().v128Store();
    this.get(dst).i32(16).i32Add().set(dst).get(src).i32(16).i32Add().set(src).br(0);
    this.end().end();
    this.block().loop();
    this.get(dst).get(end).op('i32.ge_u').brIf(1);
    this.get(dst).get(src).mem(load).mem(store);
    this.get(dst).i32(size).i32Add().set(dst).get(src).i32(size).i32Add().set(src).br(0);
    return this.end().end();
  }

  /** The encoded body: local declarations (runs of one type), code, end. */
  encode(): number[] {
    const runs: number[][] = [];
    for (const t of this.#locals) {
      const last = runs[runs.length - 1];
      if (last && last[1] === t) last[0]!++;
      else runs.push([1, t]);
    }
    const body = [...vec(runs.map(([n, t]) => [...uleb(n!), t!])), ...this.#prologue, ...this.code, 0x0b];
    return [...uleb(body.length), ...body];
  }
}

/** An exported function: its name and body. */
export interface ExportedFunction {
  readonly name: string;
  readonly body: Body;
}

/**
 * A module under construction: functions get indices as they are added (reserved before their
 * body is built, so that a body may add the functions it calls), some are exported by name.
 */
export class ModuleBuilder {
  readonly #bodies: (Body | undefined)[] = [];
  readonly #byKey = new Map<string, number>();
  readonly #exports: [string, number][] = [];

  /** Adds a function; returns its index. */
  add(body: Body): number {
    this.#bodies.push(body);
    return this.#bodies.length - 1;
  }

  /**
   * The index of the function known by `key`, built by `build` the first time (which may itself
   * ask for other functions): libraries add what a kernel calls, once per module.
   */
  function(key: string, build: () => Body): number {
    const known = this.#byKey.get(key);
    if (known !== undefined) return known;
    const index = this.#bodies.length;
    this.#bodies.push(undefined);
    this.#byKey.set(key, index);
    this.#bodies[index] = build();
    return index;
  }

  export(exportName: string, index: number): this {
    if (this.#exports.some(([n]) => n === exportName)) throw new Error(`ModuleBuilder: export '${exportName}' is already defined`);
    this.#exports.push([exportName, index]);
    return this;
  }

  /**
   * The bytes of a module that imports `env.memory` (shared, 1 to 65536 pages: the arena's
   * declaration, so that any arena memory can be given at instantiation).
   */
  bytes(): Uint8Array<ArrayBuffer> {
    const bodies = this.#bodies.map((b, i) => {
      if (b === undefined) throw new Error(`ModuleBuilder: function ${i} was reserved but never built`);
      return b;
    });
    const signatures: string[] = [];
    const typeOf = bodies.map((b) => {
      const sig = [0x60, ...vec(b.params.map((p) => [p])), ...vec(b.results.map((r) => [r]))].join(',');
      const at = signatures.indexOf(sig);
      return at >= 0 ? at : signatures.push(sig) - 1;
    });
    const types = signatures.map((s) => s.split(',').map(Number));
    const memoryImport = [...name('env'), ...name('memory'), 0x02, 0x03, ...uleb(1), ...uleb(65536)];
    const out = [
      ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
      ...section(1, vec(types)),
      ...section(2, vec([memoryImport])),
      ...section(3, vec(typeOf.map((t) => uleb(t)))),
      ...section(7, vec(this.#exports.map(([n, i]) => [...name(n), 0x00, ...uleb(i)]))),
      ...section(10, vec(bodies.map((b) => b.encode()))),
    ];
    return new Uint8Array(out);
  }
}

/** The bytes of a module that exports each of `functions` under its name (see ModuleBuilder.bytes). */
export function emitModule(functions: readonly ExportedFunction[]): Uint8Array<ArrayBuffer> {
  const module = new ModuleBuilder();
  for (const f of functions) module.export(f.name, module.add(f.body));
  return module.bytes();
}
