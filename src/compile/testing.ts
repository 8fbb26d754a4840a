// Test helpers for op authors (Theano's "How to test it"): checkInferShape compares an op's
// inferShape with the shapes of real outputs, and checkRop compares Rop with finite differences
// and with Lop (u . (J v) must equal (u J) . v). verifyGrad lives in verify-grad.ts.
import { isFloatDtype } from '../kernels/dtype.js';
import type { Apply } from '../graph/apply.js';
import type { Op } from '../graph/op.js';
import { ioToposort } from '../graph/traversal.js';
import { constant } from '../tensor/core/as-tensor.js';
import { Lop, Rop } from '../tensor/gradient/grad.js';
import { copyArray, flatValues, ndarrayDtype, shapeText, type NdArray } from '../tensor/core/ndarray.js';
import { Rng } from '../tensor/random/rng.js';
import { shapeOf } from '../tensor/shape/shape.js';
import type { TensorType } from '../tensor/core/type.js';
import type { TensorLike, TensorVariable } from '../tensor/core/variable.js';
import { compile, type InputValue } from './function.js';

export class CheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckError';
  }
}

/**
 * For every node of `opClass` (every node, if omitted) between `inputs` and `outputs`: its
 * inferShape, evaluated on `values`, must equal the shapes its outputs really have, and must be
 * computable without running the node itself.
 */
export async function checkInferShape(
  inputs: readonly TensorVariable[],
  outputs: readonly TensorVariable[],
  values: readonly TensorLike[],
  opClass?: abstract new (...args: never[]) => Op,
): Promise<number> {
  const nodes = ioToposort(inputs, outputs).filter((n) => !opClass || n.op instanceof opClass);
  if (nodes.length === 0) throw new CheckError(`checkInferShape: no ${opClass?.name ?? ''} node between the inputs and the outputs`);
  for (const node of nodes) await checkNode(node, inputs, values);
  return nodes.length;
}

async function checkNode(node: Apply, inputs: readonly TensorVariable[], values: readonly TensorLike[]): Promise<void> {
  if (!node.op.inferShape) throw new CheckError(`checkInferShape: ${node.op} has no inferShape`);
  const outs = node.outputs as TensorVariable[];
  const inferred = node.op.inferShape(node, node.inputs.map((v) => shapeOf(v as TensorVariable))) as TensorVariable[][];
  if (inferred.length !== outs.length) {
    throw new CheckError(`checkInferShape: ${node.op}.inferShape returned ${inferred.length} shapes for ${outs.length} outputs`);
  }
  inferred.forEach((dims, j) => {
    if (dims.length !== outs[j]!.ndim) {
      throw new CheckError(`checkInferShape: ${node.op}.inferShape gave ${dims.length} lengths for output ${j}, which has ${outs[j]!.ndim} axes`);
    }
  });
  const flat = inferred.flat();
  const own = new Set(node.outputs);
  if (flat.length > 0 && ioToposort(inputs, flat).some((n) => n.outputs.some((o) => own.has(o)))) {
    throw new CheckError(`checkInferShape: the shape ${node.op}.inferShape gives depends on the node's own outputs`);
  }
  const args = values as InputValue[];
  const real = await (await compile(inputs, outs, { onUnusedInput: 'ignore', name: 'checkInferShape outputs' }))(...args);
  const lengths = flat.length > 0 ? await (await compile(inputs, flat, { onUnusedInput: 'ignore', name: 'checkInferShape shapes' }))(...args) : [];
  let k = 0;
  inferred.forEach((dims, j) => {
    const got = dims.map(() => Number(lengths[k++]!.data[lengths[k - 1]!.offset]));
    const want = real[j]!.shape;
    if (got.some((d, a) => d !== want[a])) {
      throw new CheckError(`checkInferShape: ${node.op}.inferShape says output ${j} has shape ${shapeText(got)}, its value has ${shapeText(want)}`);
    }
    const type = outs[j]!.type as TensorType;
    type.shape.forEach((d, a) => {
      if (d !== null && d !== want[a]) {
        throw new CheckError(`checkInferShape: output ${j} of ${node.op} has static shape ${type}, its value has ${shapeText(want)}`);
      }
    });
  });
}

export interface CheckRopOptions {
  readonly rng?: Rng | number;
  readonly eps?: number;
  readonly tol?: number;
}

function close(a: number, b: number, tol: number): boolean {
  return Math.abs(a - b) <= tol * (1 + Math.abs(a) + Math.abs(b));
}

/**
 * Checks Rop(fn(x), x, v) at `points` along seeded random directions against central finite
 * differences, and against Lop through the identity u . (J v) = (u J) . v.
 */
export async function checkRop(
  fn: (...xs: TensorVariable[]) => TensorVariable,
  points: readonly NdArray[],
  options: CheckRopOptions = {},
): Promise<void> {
  const rng = options.rng instanceof Rng ? options.rng : new Rng(options.rng ?? 7);
  const inputs = points.map((p, i) => {
    const dtype = ndarrayDtype(p, `checkRop: point ${i}`);
    if (dtype !== 'float32' && dtype !== 'float64') throw new TypeError(`checkRop: point ${i} ${dtype ? `has dtype ${dtype}` : 'is an ndarray over a plain JS array'}; Rop is checked at float points`);
    return constant(0, { dtype }).type.clone({ shape: p.shape.map((d) => (d === 1 ? 1 : null)) }).makeVariable(`x${i}`);
  });
  const out = fn(...inputs);
  if (!isFloatDtype(out.dtype)) throw new CheckError(`checkRop: fn returned ${out.dtype} values; Rop needs a float output`);
  const f32 = out.dtype === 'float32' || inputs.some((x) => x.dtype === 'float32');
  const eps = options.eps ?? (f32 ? 1e-3 : 1e-6);
  const tol = options.tol ?? (f32 ? 1e-2 : 1e-5);
  const evs = inputs.map((x) => x.type.makeVariable(`v_${x.name}`));
  const jv = Rop(out, inputs, evs) as TensorVariable;
  const jvFn = await compile([...inputs, ...evs], jv, { onUnusedInput: 'ignore', name: 'checkRop Rop' });
  const fFn = await compile(inputs, out, { onUnusedInput: 'ignore', name: 'checkRop f' });
  const directions = points.map((p, i) => rng.normal(p.shape, { dtype: (inputs[i]!.type as TensorType).dtype }));
  const analytic = flatValues(await jvFn(...points, ...directions));

  const shift = (sign: number): NdArray[] =>
    points.map((p, i) => {
      const o = copyArray(p);
      const dv = flatValues(directions[i]!);
      for (let k = 0; k < o.data.length; k++) o.data[k] = o.data[k]! + sign * eps * dv[k]!;
      return o;
    });
  const fp = flatValues(await fFn(...shift(1)));
  const fm = flatValues(await fFn(...shift(-1)));
  for (let k = 0; k < analytic.length; k++) {
    const numeric = (fp[k]! - fm[k]!) / (2 * eps);
    if (!close(analytic[k]!, numeric, tol)) {
      throw new CheckError(`checkRop: element ${k} of Rop is ${analytic[k]}, finite differences give ${numeric} (tol ${tol})`);
    }
  }

  const outValue = await fFn(...points);
  const u = rng.normal(outValue.shape, { dtype: out.dtype });
  const uv = out.type.makeVariable('u');
  const uj = Lop(out, inputs, uv) as TensorVariable[];
  const ujFn = await compile([...inputs, uv], uj, { onUnusedInput: 'ignore', name: 'checkRop Lop' });
  const ujValues = await ujFn(...points, u);
  let left = 0;
  const uFlat = flatValues(u);
  for (let k = 0; k < analytic.length; k++) left += uFlat[k]! * analytic[k]!;
  let right = 0;
  ujValues.forEach((g, i) => {
    const gv = flatValues(g);
    const dv = flatValues(directions[i]!);
    for (let k = 0; k < gv.length; k++) right += gv[k]! * dv[k]!;
  });
  if (!close(left, right, tol)) {
    throw new CheckError(`checkRop: u . Rop(v) = ${left} but Lop(u) . v = ${right} (tol ${tol})`);
  }
}
