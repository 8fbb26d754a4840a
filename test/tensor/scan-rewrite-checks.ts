// What the scan rewrite tests share: compiling one graph rewritten (on 0 and 2 workers) and with
// rewrites excluded and comparing the values, and looking at the Scan nodes of a compiled function.
import type { Test } from 'tap';
import { near, weft } from '../helpers.js';

export type TV = weft.pt.TensorVariable;
export type Fn = weft.WeftFunction<weft.NdArray | weft.NdArray[]>;

export const one = (outputs: TV | TV[]): TV => outputs as TV;
export const many = (outputs: TV | TV[]): TV[] => outputs as TV[];
export const without = (...tags: string[]): weft.Mode => new weft.Mode({ excluding: tags });

/** The Scan nodes of a compiled function. */
export const scans = (fn: Fn): weft.Apply[] => fn.fgraph.toposort().filter((n) => n.op instanceof weft.ScanOp);
/** The one Scan node of a compiled function, and its op. */
export function theScan(t: Test, fn: Fn): { node: weft.Apply; op: weft.ScanOp } {
  const found = scans(fn);
  t.equal(found.length, 1, 'one Scan node');
  return { node: found[0]!, op: found[0]!.op as weft.ScanOp };
}
/** The names of the ops in a Scan's step graph. */
export const stepOps = (op: weft.ScanOp): string[] => op.inner.toposort().map((n) => String(n.op));
/** The names of the ops of the outer graph that run before the loop. */
export const outerOps = (fn: Fn): string[] => fn.fgraph.toposort().map((n) => String(n.op));

export const asList = (r: weft.NdArray | weft.NdArray[]): weft.NdArray[] => (Array.isArray(r) ? r : [r]);

/**
 * Compiles `outputs` three ways (rewritten on 0 and on `pool`'s 2 workers, and with `excluded`
 * left out) and checks: equal bits on 0 and 2 workers, values within `tol` of the excluded
 * graph's. Returns the rewritten function (0 workers) for checks of its graph.
 */
export async function checkValues(t: Test, pool: weft.Pool, inputs: TV[], outputs: TV[], values: unknown[], excluded: string[], tol = 1e-12): Promise<Fn> {
  const args = values as weft.InputValue[];
  const fn = (await weft.compile(inputs, outputs, { workers: 0, onUnusedInput: 'ignore' })) as Fn;
  const onPool = (await weft.compile(inputs, outputs, { pool, onUnusedInput: 'ignore' })) as Fn;
  const reference = (await weft.compile(inputs, outputs, { workers: 0, onUnusedInput: 'ignore', mode: without(...excluded) })) as Fn;
  const [a, b, r] = [asList(await fn(...args)), asList(await onPool(...args)), asList(await reference(...args))];
  a.forEach((v, i) => {
    t.same(Array.from(v.data.subarray(v.offset, v.offset + v.size)), Array.from(b[i]!.data.subarray(b[i]!.offset, b[i]!.offset + b[i]!.size)), `output ${i}: equal bits on 0 and 2 workers`);
    near(t, v, weft.tolist(r[i]!) as never, tol, `output ${i}: as without ${excluded.join(', ')}`);
  });
  return fn;
}
