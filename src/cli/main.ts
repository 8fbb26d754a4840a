#!/usr/bin/env node
// The `weft` command (the package's bin): reads its subcommand and runs it; commands.ts lists them.
import { runCommand } from './commands.js';

process.exitCode = await runCommand(process.argv.slice(2), { out: process.stdout, err: process.stderr });
