// A tiny WebAssembly binary emitter: just enough to write numeric kernels in TypeScript (no
// wat2wasm at build or run time). A module imports one shared memory ("env" "memory") and
// exports functions whose bodies are built from the handful of opcodes those kernels use.

/** Value types. */
export const I32 = 0x7f;
export const F32 = 0x7d;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof F32 | typeof V128;

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

/** SIMD opcodes (after the 0xfd prefix), the few kernels use. */
const SIMD = { load: 0x00, load32Splat: 0x09, store: 0x0b, f32x4Splat: 0x13, f32x4Add: 0xe4, f32x4Mul: 0xe6 } as const;

/**
 * A function body under construction: typed methods append instructions. Locals are declared
 * with `local` (after the parameters, which are locals 0..n-1).
 */
export class Body {
  readonly code: number[] = [];
  readonly #locals: ValType[] = [];

  constructor(readonly params: readonly ValType[]) {}

  /** A new local of type `t`; returns its index. */
  local(t: ValType): number {
    this.#locals.push(t);
    return this.params.length + this.#locals.length - 1;
  }

  #op(...bytes: number[]): this {
    this.code.push(...bytes);
    return this;
  }

  #simd(op: number, ...imm: number[]): this {
    return this.#op(0xfd, ...uleb(op), ...imm);
  }

  get(i: number): this { return this.#op(0x20, ...uleb(i)); }
  set(i: number): this { return this.#op(0x21, ...uleb(i)); }
  i32(v: number): this { return this.#op(0x41, ...sleb(v)); }
  f32(v: number): this { return this.#op(0x43, ...new Uint8Array(new Float32Array([v]).buffer)); }
  i32Add(): this { return this.#op(0x6a); }
  i32Sub(): this { return this.#op(0x6b); }
  i32Eqz(): this { return this.#op(0x45); }
  f32Eq(): this { return this.#op(0x5b); }
  f32Add(): this { return this.#op(0x92); }
  f32Mul(): this { return this.#op(0x94); }
  /** f32.load with a constant byte offset (alignment hint 4 bytes). */
  f32Load(offset = 0): this { return this.#op(0x2a, 2, ...uleb(offset)); }
  f32Store(offset = 0): this { return this.#op(0x38, 2, ...uleb(offset)); }
  v128Load(offset = 0): this { return this.#simd(SIMD.load, 4, ...uleb(offset)); }
  v128Store(offset = 0): this { return this.#simd(SIMD.store, 4, ...uleb(offset)); }
  /** Loads one f32 and broadcasts it to the four lanes. */
  load32Splat(offset = 0): this { return this.#simd(SIMD.load32Splat, 2, ...uleb(offset)); }
  f32x4Splat(): this { return this.#simd(SIMD.f32x4Splat); }
  f32x4Add(): this { return this.#simd(SIMD.f32x4Add); }
  f32x4Mul(): this { return this.#simd(SIMD.f32x4Mul); }
  /** Structured control: blocks without results. */
  block(): this { return this.#op(0x02, 0x40); }
  loop(): this { return this.#op(0x03, 0x40); }
  if(): this { return this.#op(0x04, 0x40); }
  else(): this { return this.#op(0x05); }
  end(): this { return this.#op(0x0b); }
  brIf(depth: number): this { return this.#op(0x0d, ...uleb(depth)); }

  /** The encoded body: local declarations (one group per local: simple, and few), code, end. */
  encode(): number[] {
    const body = [...vec(this.#locals.map((t) => [1, t])), ...this.code, 0x0b];
    return [...uleb(body.length), ...body];
  }
}

/** An exported function: its name and body (no results: kernels write to memory). */
export interface ExportedFunction {
  readonly name: string;
  readonly body: Body;
}

/**
 * The bytes of a module that imports `env.memory` (shared, 1 to 65536 pages: the arena's
 * declaration, so that any arena memory can be given at instantiation) and exports `functions`.
 */
export function emitModule(functions: readonly ExportedFunction[]): Uint8Array<ArrayBuffer> {
  const types = functions.map((f) => [0x60, ...vec(f.body.params.map((p) => [p])), 0]);
  const memoryImport = [...name('env'), ...name('memory'), 0x02, 0x03, ...uleb(1), ...uleb(65536)];
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    ...section(2, vec([memoryImport])),
    ...section(3, vec(functions.map((_, i) => uleb(i)))),
    ...section(7, vec(functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]))),
    ...section(10, vec(functions.map((f) => f.body.encode()))),
  ];
  return new Uint8Array(bytes);
}
