// The arena: one shared WebAssembly.Memory per pool (its buffer is a SharedArrayBuffer, so JS
// kernels and later WebAssembly kernels see the same bytes). It hands out blocks: a region per
// in-flight call, and the bytes of plan descriptors. Blocks are recycled by size class; the
// memory only grows (a shared memory cannot move or shrink), and views are re-made after growth.
import { bytesPerElement, STORAGE, type Dtype, type TypedArray } from '../kernels/dtype.js';
import { attachWasmMemory, bufferOf, WASM_PACK_A_BYTES, WASM_PACK_BYTES, WASM_SCRATCH_BYTES } from '../kernels/gemm-wasm.js';
import { MemoryViews } from './bound-plan.js';

const PAGE = 65536;
/** Every block starts at a multiple of this (cache lines, and SIMD loads later). */
export const ALIGN = 64;
/** Shared memories are reserved at their maximum up front: 4 GiB of address space. */
const MAX_PAGES = 65536;
/**
 * Scratch for WebAssembly kernels, a slot per thread that maps the memory (kernels run to
 * completion, so a thread needs one): a counter that threads increment to claim a slot, then
 * the slots' small blocks, then fewer, larger packing blocks for B's strips, then fewer still for
 * A's panels (pages are only touched by threads that use them). A thread beyond the last small
 * slot runs the JS kernels where they would need scratch; one beyond the last packing block runs
 * without packing (the same results, slower). The scratch ends at about 10 MiB, below a pool's
 * first 16 MiB: a new pool grows its memory for its first large call, not for the scratch.
 */
const SCRATCH_COUNTER = ALIGN;
const SCRATCH_SLOTS = 256;
const SCRATCH_BASE = 2 * ALIGN;
const PACK_SLOTS = 32;
const PACK_BASE = SCRATCH_BASE + SCRATCH_SLOTS * WASM_SCRATCH_BYTES;
const PACK_A_SLOTS = 16;
const PACK_A_BASE = PACK_BASE + PACK_SLOTS * WASM_PACK_BYTES;
const FIRST_BLOCK = PACK_A_BASE + PACK_A_SLOTS * WASM_PACK_A_BYTES;

/** Lets the calling thread run WebAssembly kernels on an arena's memory, with scratch of its own. */
export function attachThread(memory: WebAssembly.Memory): void {
  const slot = Atomics.add(new Int32Array(memory.buffer, SCRATCH_COUNTER, 1), 0, 1);
  const scratch = slot < SCRATCH_SLOTS ? SCRATCH_BASE + slot * WASM_SCRATCH_BYTES : undefined;
  const packed = slot < PACK_SLOTS ? PACK_BASE + slot * WASM_PACK_BYTES : undefined;
  attachWasmMemory(memory, scratch, packed, slot < PACK_A_SLOTS ? PACK_A_BASE + slot * WASM_PACK_A_BYTES : undefined);
}

/** Above this, blocks are sized in eighths of a power of two rather than in powers of two. */
const FINE_CLASSES = 1 << 26;

/**
 * The size of the block that serves a request: a power of two (from 4 KiB), or above 64 MiB a
 * multiple of an eighth of one, so that a region of 2 GiB and a little does not take 4 GiB.
 */
function sizeClass(bytes: number): number {
  let c = 4096;
  while (c < bytes) c *= 2;
  if (c <= FINE_CLASSES) return c;
  const step = c / 16;
  return Math.ceil(bytes / step) * step;
}

/** The bytes of the largest block an arena can ever hand out. */
export const ARENA_LIMIT_BYTES = MAX_PAGES * PAGE - FIRST_BLOCK;

/** Whether an arena could ever hand out a block of `bytes` (when nothing else is held). */
export function arenaCanHold(bytes: number): boolean {
  return sizeClass(bytes) <= ARENA_LIMIT_BYTES;
}

/** A piece of the arena: where it starts and how many bytes it spans. */
export interface Block {
  readonly offset: number;
  readonly size: number;
}

/**
 * A block the arena cannot hand out: one larger than its shared memory can ever hold (refused
 * when a call is planned, `what` naming the value, its node and shape), or one larger than what
 * is left now.
 */
export class ArenaFullError extends RangeError {
  constructor(
    readonly bytes: number,
    what?: string,
  ) {
    const limit = `the shared memory is limited to 4 GiB (one block at most ${ARENA_LIMIT_BYTES} bytes)`;
    super(
      what !== undefined
        ? `weft arena: ${what} needs ${bytes} bytes, more than any block can hold: ${limit}`
        : `weft arena: cannot allocate ${bytes} bytes; ${limit}${arenaCanHold(bytes) ? ', and the rest is in use' : ''}`,
    );
    this.name = 'ArenaFullError';
  }
}

/** Something that holds idle blocks it could give back (an executor's cached regions). */
export interface IdleHolder {
  /** Gives every block it holds but does not use right now back to the arena. */
  releaseIdle(): void;
}

export class Arena {
  readonly memory: WebAssembly.Memory;
  readonly views: MemoryViews;
  /** Arrays handed out by `array` and `ownedArray`, and the blocks behind them (given back when collected). */
  readonly #owned = new WeakMap<object, Block>();
  readonly #collected = new FinalizationRegistry<Block>((block) => this.release(block));
  #top = FIRST_BLOCK;
  readonly #free = new Map<number, number[]>();
  /** Holders of idle blocks, asked to give them back when the memory cannot grow (held weakly). */
  readonly #idleHolders = new Set<WeakRef<IdleHolder>>();

  constructor(initialBytes = 16 << 20) {
    const pages = Math.max(1, Math.ceil(initialBytes / PAGE));
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
    this.views = new MemoryViews(this.memory);
    attachThread(this.memory);
  }

  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** A block of at least `bytes` bytes (zeroed only the first time it is handed out). */
  allocate(bytes: number): { offset: number; size: number } {
    const size = sizeClass(bytes);
    const recycled = this.#free.get(size)?.pop();
    if (recycled !== undefined) return { offset: recycled, size };
    const offset = this.#top;
    const end = offset + size;
    if (end > this.memory.buffer.byteLength) {
      const need = Math.ceil((end - this.memory.buffer.byteLength) / PAGE);
      const grow = Math.max(need, Math.ceil(this.memory.buffer.byteLength / PAGE / 2));
      const pages = this.memory.buffer.byteLength / PAGE;
      if (pages + need > MAX_PAGES) {
        const reused = this.#split(size) ?? this.#reclaim(size);
        if (reused !== undefined) return { offset: reused, size };
        // Free neighbours merged (and those at the top given back to it) may serve it.
        if (this.#coalesce()) return this.allocate(bytes);
        throw new ArenaFullError(bytes);
      }
      this.memory.grow(Math.min(grow, MAX_PAGES - pages));
    }
    // After a growth, ours or another's (a user's kernel may grow the memory it imports): the
    // views must reach the new block, and calls bind their plans again when they changed.
    if (end > this.views.i32.byteLength) this.views.refresh();
    this.#top = end;
    return { offset, size };
  }

  /**
   * A free block of a larger class cut down to `size` (the other halves become free blocks),
   * when the memory cannot grow: without it, bytes released in one size class (a large call that
   * ran once) could never serve another, and the arena would report itself full.
   */
  #split(size: number): number | undefined {
    let from = 0;
    for (const [c, list] of this.#free) if (c > size && list.length > 0 && (from === 0 || c < from)) from = c;
    if (from === 0) return undefined;
    const offset = this.#free.get(from)!.pop()!;
    if (from <= FINE_CLASSES) {
      // Powers of two: the other halves, down to `size`.
      for (let c = from / 2; c >= size; c /= 2) this.release({ offset: offset + c, size: c });
    } else this.release({ offset: offset + size, size: from - size });
    return offset;
  }

  /**
   * Merges free blocks that touch into one, and gives those that end at the top back to it;
   * returns whether anything changed. Regions of calls that grew, each freed in its own size
   * class, could otherwise never serve a larger call once the memory is at its limit.
   */
  #coalesce(): boolean {
    const blocks = [...this.#free].flatMap(([size, offsets]) => offsets.map((offset) => ({ offset, size }))).sort((a, b) => a.offset - b.offset);
    const merged: Block[] = [];
    for (const b of blocks) {
      const last = merged[merged.length - 1];
      if (last && last.offset + last.size === b.offset) merged[merged.length - 1] = { offset: last.offset, size: last.size + b.size };
      else merged.push(b);
    }
    const top = merged[merged.length - 1];
    if (top && top.offset + top.size === this.#top) {
      this.#top = top.offset;
      merged.pop();
    } else if (merged.length === blocks.length) return false;
    this.#free.clear();
    for (const b of merged) this.release(b);
    return true;
  }

  /** Registers a holder of idle blocks, asked to give them back when the memory is full. */
  addIdleHolder(holder: IdleHolder): void {
    this.#idleHolders.add(new WeakRef(holder));
  }

  /**
   * When the memory is full: idle regions cached by functions (each keeps one per plan for its
   * next call) are given back, then the request is tried again. A program that compiled many
   * functions over large inputs and still holds them would otherwise hit the 4 GiB limit.
   */
  #reclaim(size: number): number | undefined {
    for (const ref of this.#idleHolders) {
      const holder = ref.deref();
      if (holder === undefined) this.#idleHolders.delete(ref);
      else holder.releaseIdle();
    }
    return this.#free.get(size)?.pop() ?? this.#split(size);
  }

  release(block: { offset: number; size: number }): void {
    const list = this.#free.get(block.size) ?? [];
    list.push(block.offset);
    this.#free.set(block.size, list);
  }

  /**
   * A new zero-filled typed array in this shared memory. Functions running on this arena's pool
   * read such arrays in place (no copy). Its block returns to the arena when the array is collected.
   */
  array(dtype: Dtype, length: number): TypedArray {
    return this.#arrayIn(dtype, length, false).fill(0);
  }

  /** A typed array over a new block, given back when collected (or by giveBack, for an owner's). */
  #arrayIn(dtype: Dtype, length: number, owners: boolean): TypedArray {
    const block = this.allocate(Math.max(1, length) * bytesPerElement(dtype));
    const data = new STORAGE[dtype](bufferOf(this.memory), block.offset, length);
    this.#owned.set(data, block);
    // An owner's array is registered under itself, so that giveBack can take it off (and tell it).
    if (owners) this.#collected.register(data, block, data);
    else this.#collected.register(data, block);
    return data;
  }

  /**
   * A typed array of `length` elements in a block of its own, not zeroed (its owner writes every
   * element before anyone reads it). Functions on this arena's pool read it in place, as an array
   * of `array`; its owner gives its block back with `giveBack` as soon as nothing reads it (the
   * collector does, if the owner never does).
   */
  ownedArray(dtype: Dtype, length: number): TypedArray {
    return this.#arrayIn(dtype, length, true);
  }

  /**
   * Gives back the block of an array made by `ownedArray` (true), once; false for any other array.
   * The array still views those bytes: whoever reads it later sees what the block's next owner
   * writes, so the owner calls this only once nothing reads it.
   */
  giveBack(data: object): boolean {
    const block = this.#owned.get(data);
    if (!block || !this.#collected.unregister(data)) return false;
    this.#owned.delete(data);
    this.release(block);
    return true;
  }

  /** The byte offset of `data` in this memory, when it is an array this arena handed out. */
  offsetOf(data: object): number | undefined {
    return this.#owned.has(data) ? (data as TypedArray).byteOffset : undefined;
  }

  /** Stores `text` (UTF-8) in a new block; returns where. */
  storeText(text: string): { offset: number; length: number; size: number } {
    const bytes = new TextEncoder().encode(text);
    const block = this.allocate(bytes.length);
    new Uint8Array(this.memory.buffer, block.offset, bytes.length).set(bytes);
    return { offset: block.offset, length: bytes.length, size: block.size };
  }
}

/** Reads text stored by `storeText` (copying out of shared memory, which TextDecoder requires). */
export function readText(memory: WebAssembly.Memory, offset: number, length: number): string {
  return new TextDecoder().decode(new Uint8Array(memory.buffer, offset, length).slice());
}

let inline: Arena | undefined;

/** The arena of plans that run only on the calling thread (no pool, no threads). */
export function inlineArena(): Arena {
  return (inline ??= new Arena(1 << 20));
}
