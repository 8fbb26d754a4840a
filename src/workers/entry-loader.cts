// What piscina loads in each worker: a CommonJS module that imports the ES entry (entry.ts).
// piscina first tries require() on its module, and on Node 20.19+ require() of an ES module
// with top-level await once crashed a worker outright (v8::Module::IsGraphAsync on a module not
// yet instantiated) instead of failing over to import(); a CommonJS file never takes that path.
import type { TeamMessage, TeamResult } from './protocol.js';

type Run = (message: TeamMessage) => TeamResult | TeamResult[];

// Imported when piscina loads this file at the worker's start, not at its first message: the
// entry starts watching the job ring, whose jobs come without a message.
const entry = import('./entry.js') as Promise<{ default: Run }>;
// A failure shows at the first message (the job rejects with it).
entry.catch(() => undefined);

export = async function weftWorker(message: TeamMessage): Promise<TeamResult | TeamResult[]> {
  return (await entry).default(message);
};
