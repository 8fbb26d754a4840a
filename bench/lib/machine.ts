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
    commit: git(['rev-parse', 'HEAD']),
    // Uncommitted changes to tracked files: the figures may not belong to the commit alone.
    dirty: status === undefined ? undefined : status.length > 0,
    versions: Object.fromEntries(PEERS.map((p) => [p, installedVersion(p) ?? 'not installed'])),
  };
}
