// Tests that need a program a fresh machine lacks (Chromium today, redis-server later) ask for it
// here, so that one rule holds for all of them: on a machine without the program the test is
// skipped with its reason and how to get it; where its variable says it is required (.ci/run sets
// it after installing the program), a missing or broken program fails the test instead.
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import type { Test } from 'tap';

/** A program some tests need, and how a developer gets it. */
export interface Program {
  /** What it is, as the skip message names it: 'Chromium'. */
  readonly name: string;
  /** Where it is looked for when `pathVariable` is not set. */
  readonly defaultPath: string;
  /** The variable that points at another copy: 'WEFT_CHROMIUM'. */
  readonly pathVariable: string;
  /** The variable under which a missing or broken program fails instead of skipping. */
  readonly requiredVariable: string;
  /** The command that installs it on Debian: 'apt-get install -y chromium'. */
  readonly install: string;
  /** Arguments that make it print its version and exit, to tell a broken copy from a working one. */
  readonly probe: readonly string[];
  /** The variable under which its tests are skipped even where it is available. */
  readonly skipVariable?: string;
}

/** Whether a program can be used here: its path, or why not. */
export type Availability = { readonly kind: 'available'; readonly path: string; readonly version: string } | { readonly kind: 'unavailable'; readonly reason: string };

/** Finds `program` and checks that it runs (its version probe exits 0 within 30 s). */
export function locate(program: Program, env: NodeJS.ProcessEnv = process.env): Availability {
  if (program.skipVariable && isSet(env[program.skipVariable])) return { kind: 'unavailable', reason: `${program.skipVariable}=${env[program.skipVariable]} skips the tests that need ${program.name}` };
  const path = env[program.pathVariable] || program.defaultPath;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { kind: 'unavailable', reason: `${program.name} not found at ${path}` };
  }
  try {
    const version = execFileSync(path, [...program.probe], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    return { kind: 'available', path, version };
  } catch (e) {
    const detail = (e as { stderr?: string }).stderr?.trim() || (e as Error).message;
    return { kind: 'unavailable', reason: `${program.name} at ${path} does not run (${path} ${program.probe.join(' ')}: ${detail.split('\n')[0]})` };
  }
}

/** Whether the environment makes `program` required (its variable is set to 1 or true). */
export function isRequired(program: Program, env: NodeJS.ProcessEnv = process.env): boolean {
  return isSet(env[program.requiredVariable]);
}

function isSet(value: string | undefined): boolean {
  return value === '1' || value === 'true';
}

/** The message a skipped test gives: what is missing and the two ways to run the test. */
export function skipReason(program: Program, reason: string): string {
  return `${reason}; to run this test: ${program.install}, or set ${program.pathVariable}=/path/to/it`;
}

/**
 * The program's path when it is available. Otherwise, when it is required, `t` fails with the
 * reason; when it is not, `t` gets one skipped subtest named `title` that carries the reason.
 * Returns undefined in both cases: the caller defines its tests only when it gets a path.
 */
export function requires(t: Test, program: Program, title: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const found = locate(program, env);
  if (found.kind === 'available') return found.path;
  if (isRequired(program, env)) {
    t.fail(`${found.reason}, and ${program.requiredVariable}=${env[program.requiredVariable]} requires it (${program.install}, or set ${program.pathVariable})`);
  } else {
    t.test(title, { skip: skipReason(program, found.reason) }, () => undefined);
  }
  return undefined;
}

/** Debian's Chromium, which the browser test drives through playwright-core. */
export const CHROMIUM: Program = {
  name: 'Chromium',
  defaultPath: '/usr/bin/chromium',
  pathVariable: 'WEFT_CHROMIUM',
  requiredVariable: 'WEFT_REQUIRE_BROWSER',
  install: 'apt-get install -y chromium',
  probe: ['--headless', '--no-sandbox', '--version'],
  skipVariable: 'WEFT_SKIP_BROWSER',
};

/** Debian's redis-server, which the cluster tests (BullMQ) start on a free port of their own. */
export const REDIS: Program = {
  name: 'redis-server',
  defaultPath: '/usr/bin/redis-server',
  pathVariable: 'WEFT_REDIS_SERVER',
  requiredVariable: 'WEFT_REQUIRE_REDIS',
  install: 'apt-get install -y redis-server',
  probe: ['--version'],
  skipVariable: 'WEFT_SKIP_REDIS',
};
