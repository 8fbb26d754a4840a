// What a workload is to the runner: an id (W1..W8), a title for the table, and a function that
// measures weft and its peers into the suite's rows.
import type { Suite } from './suite.js';

export interface Workload {
  readonly id: string;
  readonly title: string;
  run(suite: Suite): Promise<void>;
}
