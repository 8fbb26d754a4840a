// What shared WebAssembly memories cost here (issue 5: one large arena or many): the time to
// create one, the address space it reserves (VmSize), and the time to grow it. Run with
// `npx tsx bench/arena.ts`.
import { readFileSync } from 'node:fs';

function vmSizeMiB(): number {
  const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('VmSize:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

function measure(label: string, count: number, maximumPages: number): void {
  const before = vmSizeMiB();
  const t0 = performance.now();
  const memories: WebAssembly.Memory[] = [];
  for (let i = 0; i < count; i++) memories.push(new WebAssembly.Memory({ initial: 16, maximum: maximumPages, shared: true }));
  const ms = performance.now() - t0;
  const reserved = vmSizeMiB() - before;
  const g0 = performance.now();
  const pages = Math.min(1024, maximumPages - 16);
  for (const m of memories) m.grow(pages);
  const grow = (performance.now() - g0) / count;
  console.log(
    `${label.padEnd(36)} create ${(ms / count).toFixed(3)} ms each, reserves ${(reserved / count).toFixed(0)} MiB of address space each, grow by ${pages / 16} MiB ${grow.toFixed(3)} ms`,
  );
  memories.length = 0;
}

measure('1 memory, maximum 4 GiB', 1, 65536);
measure('16 memories, maximum 4 GiB', 16, 65536);
measure('16 memories, maximum 256 MiB', 16, 4096);
measure('64 memories, maximum 64 MiB', 64, 1024);
console.log('weft uses one memory per pool (and one for calls on the calling thread): address space is reserved per memory, not per byte');
