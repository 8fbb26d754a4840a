// Fixtures for the IR tests: a feature that records every event as readable text, and a
// snapshot of a FunctionGraph's whole bookkeeping to check that an undone change left no trace.
import { weft } from '../helpers.js';

type FunctionGraph = weft.FunctionGraph;

export function clientText(c: weft.Client): string {
  return c.kind === 'output' ? `output ${c.index}` : `${c.node.op} input ${c.index}`;
}

/** Records the events it hears, in order, as text such as "import Elemwise{exp}(x) [why]". */
export class Recorder implements weft.Feature {
  readonly events: string[] = [];

  onAttach(fg: FunctionGraph): void {
    this.events.push(`attach ${fg}`);
  }
  onDetach(fg: FunctionGraph): void {
    this.events.push(`detach ${fg}`);
  }
  onImport(_fg: FunctionGraph, node: weft.Apply, reason: string): void {
    this.events.push(`import ${node} [${reason}]`);
  }
  onPrune(_fg: FunctionGraph, node: weft.Apply, reason: string): void {
    this.events.push(`prune ${node} [${reason}]`);
  }
  onChangeInput(_fg: FunctionGraph, client: weft.Client, oldVar: weft.Variable, newVar: weft.Variable, reason: string): void {
    this.events.push(`change ${clientText(client)}: ${oldVar} -> ${newVar} [${reason}]`);
  }
  take(): string[] {
    return this.events.splice(0);
  }
}

export interface Snapshot {
  readonly inputs: readonly weft.Variable[];
  readonly outputs: readonly weft.Variable[];
  readonly applyNodes: ReadonlySet<weft.Apply>;
  readonly variables: ReadonlySet<weft.Variable>;
  /** node -> its inputs */
  readonly wiring: ReadonlyMap<weft.Apply, readonly weft.Variable[]>;
  /** variable -> its clients, in order, as text */
  readonly clients: ReadonlyMap<weft.Variable, readonly string[]>;
  readonly toposort: readonly weft.Apply[];
}

export function snapshot(fg: FunctionGraph): Snapshot {
  const clients = new Map<weft.Variable, string[]>();
  for (const v of fg.variables) {
    clients.set(
      v,
      fg.clients(v).map((c) => (c.kind === 'output' ? `output ${c.index}` : `node ${c.node.outputs[0]!.id} input ${c.index}`)),
    );
  }
  return {
    inputs: [...fg.inputs],
    outputs: [...fg.outputs],
    applyNodes: new Set(fg.applyNodes),
    variables: new Set(fg.variables),
    wiring: new Map([...fg.applyNodes].map((n) => [n, [...n.inputs]])),
    clients,
    toposort: fg.toposort(),
  };
}

/** The snapshot as plain comparable data (sets become arrays sorted by id). */
export function comparable(s: Snapshot): unknown {
  const byId = <T extends { id: number }>(xs: Iterable<T>): number[] => [...xs].map((x) => x.id).sort((a, b) => a - b);
  const nodeId = (n: weft.Apply): number => n.outputs[0]!.id;
  return {
    inputs: s.inputs.map((v) => v.id),
    outputs: s.outputs.map((v) => v.id),
    applyNodes: [...s.applyNodes].map(nodeId).sort((a, b) => a - b),
    variables: byId(s.variables),
    wiring: [...s.wiring].map(([n, ins]) => [nodeId(n), ins.map((v) => v.id)]).sort((a, b) => (a[0] as number) - (b[0] as number)),
    clients: [...s.clients].map(([v, cs]) => [v.id, cs]).sort((a, b) => (a[0] as number) - (b[0] as number)),
    toposort: s.toposort.map(nodeId),
  };
}
