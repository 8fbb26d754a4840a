// The `weft` command's subcommands and its own --help: the one place that lists them.
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, type Command, type Io } from './command.js';
import { benchCommand } from './bench.js';
import { printCommand } from './print.js';
import { profileCommand } from './profile.js';
import { workerCommand } from './worker.js';

export const COMMANDS: readonly Command[] = [benchCommand, printCommand, profileCommand, workerCommand];

export const OVERVIEW = `weft: symbolic tensor graphs compiled to run on worker threads

Usage: weft <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(10)}${c.summary}`).join('\n')}

Run 'weft <command> --help' for a command's options.
`;

/** Runs the command line `args` (without node and the script); answers the exit code. */
export async function runCommand(args: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out.write(OVERVIEW);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.err.write(`weft: unknown command '${name}'\n\n${OVERVIEW}`);
    return EXIT_USAGE;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out.write(command.usage);
    return EXIT_OK;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err.write(`weft ${name}: ${e.message}\n\n${command.usage}`);
      return EXIT_USAGE;
    }
    io.err.write(`weft ${name}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}\n`);
    return EXIT_FAILED;
  }
}
