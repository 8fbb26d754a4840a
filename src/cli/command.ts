// What a subcommand of `weft` is: a name, a line for the overview, its usage text, and a run
// function that gets the arguments after its name and answers with an exit code.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Where a command writes. */
export interface Io {
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
}

export interface Command {
  readonly name: string;
  /** One line for `weft --help`. */
  readonly summary: string;
  /** The whole of `weft NAME --help`. */
  readonly usage: string;
  run(args: readonly string[], io: Io): Promise<number>;
}

/** Exit codes: done; the work failed; the command line was wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** A wrong command line: the message, then the usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `args` parsed strictly by `options` (unknown flags are usage errors). */
export function parseOptions<O extends NonNullable<ParseArgsConfig['options']>>(
  args: readonly string[],
  options: O,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>> {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** A whole number >= `min` from flag `--name`, or undefined when absent. */
export function wholeNumber(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number of at least ${min}, got '${value}'`);
  return n;
}
