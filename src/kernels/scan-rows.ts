// Where a Scan's step t writes its row in a stacked output that keeps only its last rows
// (ScanSaveMem): a ring of R = min(nSteps, keep) rows, laid out so that after the last step
// the rows are in step order without a rotation. Shared by the op's perform and the worker kernel.

/** Rows a stacked output has after `n` steps when it keeps its last `keep` (null: all of them). */
export function keptRows(n: number, keep: number | null): number {
  return keep === null ? n : Math.min(n, keep);
}

/**
 * The row of step t in an output of `rows` rows after `n` steps: step n - rows + i lands in row i,
 * and steps `rows` apart share a row, so the last `rows` steps (the past states a later step
 * reads among them) are never overwritten before they are read.
 */
export function stepRow(t: number, n: number, rows: number): number {
  if (rows === n) return t;
  return (((t - n) % rows) + rows) % rows;
}
