// What the figures were measured on: CPU, memory, Node and V8, the load from other processes
// (these machines are shared), the commit, and the peers' installed versions.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { installedVersion } from '../peers/versions.js';

export interface Load {
  readonly at: string;
  /** os.loadavg(): 1, 5 and 15 minute averages of runnable processes. */
  readonly loadavg: readonly number[];
}

export function load(): Load {
  return { at: new Date().toISOString(), loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100) };
}

function git(args: readonly string[]): string | undefined {
  try {
    return execFileSync('git', [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

export const PEERS = [
  '@tensorflow/tfjs',
  '@tensorflow/tfjs-core',
  '@tensorflow/tfjs-backend-cpu',
  '@tensorflow/tfjs-backend-wasm',
  '@jax-js/jax',
  'onnxruntime-node',
  'protobufjs',
  'piscina',
] as const;

/**
 * What this machine charges for fresh memory: µs per 4 KiB page at its first write (median of 9
 * fresh 16 MiB SharedArrayBuffers, touched page by page, each kept so that it cannot be memory
 * the process had before; 144 MiB, dropped when the run starts). Every row that returns new
 * arrays pays it: about 1 µs on the VMs of earlier sessions (0.25 ms per MiB), 10-12 on later
 * ones (the host supplying each page), which moves such rows several times between machines
 * (docs/performance.md, "Outputs you give back").
 */
export function freshPageMicros(): number {
  const bytes = 16 * 2 ** 20;
  const kept: Uint8Array[] = [];
  const times: number[] = [];
  for (let r = 0; r < 9; r++) {
    const page = new Uint8Array(new SharedArrayBuffer(bytes));
    const started = performance.now();
    for (let b = 0; b < bytes; b += 4096) page[b] = 1;
    times.push(((performance.now() - started) * 1000) / (bytes / 4096));
    kept.push(page);
  }
  return Math.round(times.sort((a, b) => a - b)[4]! * 100) / 100;
}

export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  const status = git(['status', '--porcelain', '--untracked-files=no']);
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    availableParallelism: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    freshPageMicros: freshPageMicros(),
    commit: git(['rev-parse', 'HEAD']),
    // Uncommitted changes to tracked files: the figures may not belong to the commit alone.
    dirty: status === undefined ? undefined : status.length > 0,
    versions: Object.fromEntries(PEERS.map((p) => [p, installedVersion(p) ?? 'not installed'])),
  };
}
