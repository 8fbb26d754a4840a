// Backpropagation through time: the pullback of a Scan is a scan running the steps backwards over
// the stacked forward values, carrying what later steps sent to each output's last states; with
// truncateGradient k (truncated BPTT) it goes back k steps and hands the last carry to the initial states.
import type { Apply } from '../../graph/apply.js';
import { cloneReplace } from '../../graph/clone.js';
import { disconnected, isDisconnected } from '../../graph/gradient.js';
import { ancestors } from '../../graph/traversal.js';
import type { Variable } from '../../graph/variable.js';
import { isDiscreteDtype } from '../../kernels/dtype.js';
import { zerosLike } from '../shape/alloc.js';
import { Lop, Rop } from '../gradient/grad.js';
import { concatenate, stack } from '../shape/join.js';
import { add, minimum, sub } from '../elemwise/math.js';
import { scan, until, type ScanStepResult } from './scan.js';
import { isSitSot, stateRows, type ScanOp } from './scan-op.js';
import { shapeI } from '../shape/shape.js';
import { slice } from '../core/slice.js';
import { setSubtensor } from '../shape/subtensor.js';
import type { TensorVariable } from '../core/variable.js';

const isFloat = (v: TensorVariable): boolean => !isDiscreteDtype(v.dtype);

/** `x` with a new first axis of length 1. */
const asRow = (x: TensorVariable): TensorVariable => x.dimshuffle('x', ...x.type.shape.map((_, a) => a));

/** The last row of `stacked`, or `before` when it has no row (a scan of zero steps). */
function lastOr(stacked: TensorVariable, before: TensorVariable): TensorVariable {
  return concatenate([asRow(before.astype(stacked.dtype)), stacked.get(slice(-1, null))]).get(-1);
}

/**
 * The gradients sent to each distinct variable: a step may return one variable as several
 * outputs (`[q, q]`), and each output's gradient reaches it, so they add up (a list of pairs
 * keyed by variable would keep only the last).
 */
function sumByVariable(fs: readonly TensorVariable[], gs: readonly TensorVariable[]): Array<[TensorVariable, TensorVariable]> {
  const terms = new Map<TensorVariable, TensorVariable[]>();
  fs.forEach((f, i) => terms.set(f, [...(terms.get(f) ?? []), gs[i]!]));
  return [...terms].map(([f, ts]) => [f, ts.length === 1 ? ts[0]! : add(...ts).astype(f.dtype)]);
}

/** pattern[i][j]: does output j depend on input i, through any number of steps? */
export function scanConnectionPattern(op: ScanOp, node: Apply): boolean[][] {
  const { nSeqs, taps, nNitsot, finals } = op.spec;
  const innerIns = op.inner.inputs;
  const reached = op.stepOutputs.map((o) => new Set(ancestors([o])));
  const tapsOf = (k: number): number[] => taps[k]!.map((_, t) => op.tapInput(k) + t);
  // The inner outputs that these inner inputs reach, through the states they feed back into.
  const reach = (ins: readonly number[]): boolean[] => {
    const hit = reached.map((set) => ins.some((i) => set.has(innerIns[i]!)));
    for (let changed = true; changed; ) {
      changed = false;
      taps.forEach((_, k) => {
        if (!hit[k]) return;
        reached.forEach((set, j) => {
          if (!hit[j] && tapsOf(k).some((i) => set.has(innerIns[i]!))) changed = hit[j] = true;
        });
      });
    }
    return [...hit, ...finals.map((k) => hit[k]!)];
  };
  return node.inputs.map((_, i) => {
    if (i === 0) return node.outputs.map(() => true);
    if (i <= nSeqs) return reach([i - 1]);
    if (i <= nSeqs + taps.length) {
      // An initial state is also the output before any step: its last state reaches the finals.
      const k = i - 1 - nSeqs;
      const r = reach(tapsOf(k));
      finals.forEach((fk, f) => {
        if (fk === k) r[taps.length + nNitsot + f] = true;
      });
      return r;
    }
    return reach([op.firstNonSeq + i - 1 - nSeqs - taps.length]);
  });
}

export function scanLop(op: ScanOp, inputs: readonly TensorVariable[], outputs: readonly TensorVariable[], outputGrads: readonly Variable[]): Variable[] {
  const { nSeqs, taps, nNitsot, finals, truncateGradient } = op.spec;
  const nRec = taps.length;
  // The steps run: nSteps, or with an until condition the rows stacked (Theano's as_while grad).
  // (a shared variable carried as a state is a stacked output too, so there is one to count).
  const n = op.spec.until ? shapeI(outputs[0]!, 0) : inputs[0]!;
  const seqs = inputs.slice(1, 1 + nSeqs);
  const inits = inputs.slice(1 + nSeqs, 1 + nSeqs + nRec);
  const nonSeqs = inputs.slice(1 + nSeqs + nRec);
  const innerIns = op.inner.inputs as TensorVariable[];
  const innerOuts = op.stepOutputs;
  const grads = outputGrads.map((g, j) => (isDisconnected(g) ? zerosLike(outputs[j]!) : (g as TensorVariable)));
  const diffRec = taps.map((_, k) => isFloat(outputs[k]!));
  const diffNitsot = Array.from({ length: nNitsot }, (_, j) => isFloat(outputs[nRec + j]!));
  const floatSeqs = seqs.map(isFloat);
  const floatNonSeqs = nonSeqs.map(isFloat);
  if (![...diffRec, ...diffNitsot].some(Boolean)) return inputs.map(() => disconnected());

  // The steps gone back through, [start, n), in forward order (the backward scan reverses them).
  const m = truncateGradient < 0 ? n : minimum(n, truncateGradient);
  const start = sub(n, m);
  const window = (x: TensorVariable, shift: number): TensorVariable => x.get(slice(add(start, shift), add(n, shift)));
  const pastRows = inits.map((init, k) => (isSitSot(taps[k]!) ? asRow(init) : init.get(slice(0, stateRows(taps[k]!)))));
  const full = inits.map((_, k) => concatenate([pastRows[k]!, outputs[k]!]));
  const tapSeqs = taps.flatMap((ts, k) => ts.map((tap) => window(full[k]!, stateRows(taps[k]!) + tap)));
  const gRecSeqs = taps.flatMap((_, k) => (diffRec[k] ? [window(grads[k]!, 0)] : []));
  const gNitsotSeqs = diffNitsot.flatMap((d, j) => (d ? [window(grads[nRec + j]!, 0)] : []));
  // The forward loop's results, row by row: the pullback reads them rather than computing the
  // step again (tanh's gradient needs only tanh's result, so the products before it drop out).
  const stackedFloat = [...diffRec, ...diffNitsot];
  const ySeqs = stackedFloat.flatMap((d, j) => (d ? [window(outputs[j]!, 0)] : []));
  const sequences = [...seqs.map((s) => window(s, 0)), ...tapSeqs, ...gRecSeqs, ...gNitsotSeqs, ...ySeqs];
  // The carry before the last step holds what came from after it: the gradient of the final
  // state (the last row of a sit-sot output) in its row 0. With zero steps it is the last carry.
  const carryInits = taps.flatMap((_, k) => {
    if (!diffRec[k]) return [];
    const f = finals.indexOf(k);
    return [f < 0 ? zerosLike(pastRows[k]!) : asRow(grads[nRec + nNitsot + f]!.astype(outputs[k]!.dtype))];
  });

  const tapOwner = taps.flatMap((ts, k) => ts.map(() => k));
  const step = (...args: TensorVariable[]): TensorVariable[] => {
    let a = 0;
    const take = (count: number): TensorVariable[] => args.slice(a, (a += count));
    const seqRows = take(nSeqs);
    const tapRows = take(tapSeqs.length);
    const gRec = take(gRecSeqs.length);
    const gNitsot = take(gNitsotSeqs.length);
    const yRows = take(ySeqs.length);
    const carries = take(carryInits.length);
    const ns = take(nonSeqs.length);
    const stand = [...seqRows, ...tapRows, ...ns];
    const ys = cloneReplace(innerOuts, innerIns.map((v, i): [Variable, Variable] => [v, stand[i]!])) as TensorVariable[];
    let c = 0;
    const totals = taps.flatMap((_, k) => (diffRec[k] ? [add(gRec[c]!, carries[c++]!.get(0)).astype(ys[k]!.dtype)] : []));
    const fs = [...ys.slice(0, nRec).filter((_, k) => diffRec[k]), ...ys.slice(nRec).filter((_, j) => diffNitsot[j])];
    const wrtSeq = seqRows.filter((_, i) => floatSeqs[i]);
    const wrtTaps = tapRows.filter((_, t) => diffRec[tapOwner[t]!]);
    const wrtNs = ns.filter((_, i) => floatNonSeqs[i]);
    const known = sumByVariable(fs, [...totals, ...gNitsot]);
    const recomputed = ys.filter((_, j) => stackedFloat[j]);
    // Results that the step computes (not an input passed through) are read from the forward rows.
    // (A row whose type is less precise than the step's result, such as a static length lost in
    // the stacking, cannot stand for it: that result is computed again.)
    const stored = recomputed.flatMap((y, r): Array<[Variable, Variable]> => {
      const row = yRows[r]!.astype(y.dtype);
      return y.owner && !stand.includes(y) && (y.type.equals(row.type) || y.type.convertVariable(row)) ? [[y, row]] : [];
    });
    const pulled = Lop(known.map(([f]) => f), [...wrtSeq, ...wrtTaps, ...wrtNs], known.map(([, gf]) => gf)) as TensorVariable[];
    const g = stored.length > 0 ? (cloneReplace(pulled, stored) as TensorVariable[]) : pulled;
    const gSeq = g.slice(0, wrtSeq.length);
    const gTaps = g.slice(wrtSeq.length, wrtSeq.length + wrtTaps.length);
    const gNs = g.slice(wrtSeq.length + wrtTaps.length);
    // The carry after this step: row d holds what steps so far sent to the state d+1 steps before this one.
    let t = 0;
    c = 0;
    const nextCarries = taps.flatMap((ts, k) => {
      if (!diffRec[k]) return [];
      const carry = carries[c++]!;
      const byTap = ts.map(() => gTaps[t++]!);
      const rows = Array.from({ length: stateRows(ts) }, (_, d) => {
        const terms: TensorVariable[] = [];
        if (d + 1 < stateRows(ts)) terms.push(carry.get(d + 1));
        const at = ts.indexOf(-(d + 1));
        if (at >= 0) terms.push(byTap[at]!);
        return terms.length === 0 ? zerosLike(carry.get(0)) : add(...terms);
      });
      return [stack(rows).astype(carry.dtype)];
    });
    return [...nextCarries, ...gSeq, ...gNs];
  };
  const back = scan({
    fn: step,
    sequences,
    outputsInfo: [...carryInits, ...floatSeqs.filter(Boolean).map(() => null), ...floatNonSeqs.filter(Boolean).map(() => null)],
    nonSequences: nonSeqs,
    goBackwards: true,
    name: `${op.name}.grad`,
  });
  const results = back.outputs as TensorVariable[];
  let r = 0;
  let c = 0;
  const gInits = taps.map((ts, k) => {
    if (!diffRec[k]) return disconnected();
    const last = lastOr(results[r++]!, carryInits[c++]!);
    const init = inits[k]!;
    // Row d of the last carry is the gradient of the state d+1 steps before the first step gone
    // back through: as in Theano, a truncated pass hands it to the initial state.
    return isSitSot(ts) ? last.get(0) : setSubtensor(zerosLike(init).get(slice(0, stateRows(ts))), last.get(slice(null, null, -1)));
  });
  const gSeqs = seqs.map((s, i) => {
    if (!floatSeqs[i]) return disconnected();
    return setSubtensor(window(zerosLike(s), 0), results[r++]!.get(slice(null, null, -1)));
  });
  const gNonSeqs = nonSeqs.map((v, i) => (floatNonSeqs[i] ? results[r++]!.sum({ axis: 0 }).astype(v.dtype) : disconnected()));
  return [disconnected(), ...gSeqs, ...gInits, ...gNonSeqs];
}

/**
 * The pushforward of a Scan: a scan that carries, next to each float recurrent output, its
 * tangent (the same taps, started from the initial state's direction), and stacks the tangents
 * of the other outputs. Discrete outputs (random states, integers) have none.
 */
export function scanRop(op: ScanOp, inputs: readonly TensorVariable[], evalPoints: readonly Variable[]): Variable[] {
  const { nSeqs, taps, nNitsot, finals } = op.spec;
  const nRec = taps.length;
  const seqs = inputs.slice(1, 1 + nSeqs);
  const inits = inputs.slice(1 + nSeqs, 1 + nSeqs + nRec);
  const nonSeqs = inputs.slice(1 + nSeqs + nRec);
  const point = (i: number): TensorVariable => (isDisconnected(evalPoints[i]!) ? zerosLike(inputs[i]!) : (evalPoints[i] as TensorVariable).astype(inputs[i]!.dtype));
  const floatSeq = seqs.map(isFloat);
  const floatRec = inits.map(isFloat);
  const floatNs = nonSeqs.map(isFloat);
  const floatNitsot = op.stepOutputs.slice(nRec).map(isFloat);
  const dSeqs = seqs.flatMap((_, i) => (floatSeq[i] ? [point(1 + i)] : []));
  const dNs = nonSeqs.flatMap((_, m) => (floatNs[m] ? [point(1 + nSeqs + nRec + m)] : []));
  const states = inits.map((init, k) => ({ initial: init, taps: [...taps[k]!] }));
  const tangents = inits.flatMap((_, k) => (floatRec[k] ? [{ initial: point(1 + nSeqs + k), taps: [...taps[k]!] }] : []));
  const step = (...args: TensorVariable[]): ScanStepResult => {
    let a = 0;
    const take = (count: number): TensorVariable[] => args.slice(a, (a += count));
    const seqRows = take(nSeqs);
    const dSeqRows = take(dSeqs.length);
    const tapRows = taps.map((t) => take(t.length));
    const dTapRows = taps.flatMap((t, k) => (floatRec[k] ? [take(t.length)] : []));
    const ns = take(nonSeqs.length);
    const dNsArgs = take(dNs.length);
    const stand = [...seqRows, ...tapRows.flat(), ...ns];
    const all = cloneReplace(op.inner.outputs, op.inner.inputs.map((v, i): [Variable, Variable] => [v, stand[i]!])) as TensorVariable[];
    const ys = all.slice(0, op.stepOutputs.length);
    const wrt = [...seqRows.filter((_, i) => floatSeq[i]), ...tapRows.filter((_, k) => floatRec[k]).flat(), ...ns.filter((_, m) => floatNs[m])];
    const moving = [...ys.slice(0, nRec).filter((_, k) => floatRec[k]), ...ys.slice(nRec).filter((_, j) => floatNitsot[j])];
    const jv = moving.length === 0 || wrt.length === 0 ? moving.map((y) => zerosLike(y)) : (Rop(moving, wrt, [...dSeqRows, ...dTapRows.flat(), ...dNsArgs]) as TensorVariable[]);
    const nFloatRec = floatRec.filter(Boolean).length;
    const dRec = jv.slice(0, nFloatRec).map((d, r) => d.astype(ys[floatRec.map((f, k) => (f ? k : -1)).filter((k) => k >= 0)[r]!]!.dtype));
    // The same states meet the same condition: the tangents stop with the loop.
    const outs = [...ys.slice(0, nRec), ...dRec, ...jv.slice(nFloatRec)];
    return op.spec.until ? ([...outs, until(all[all.length - 1]!)] as const) : outs;
  };
  const forward = scan({
    fn: step,
    sequences: [...seqs, ...dSeqs],
    outputsInfo: [...states, ...tangents, ...floatNitsot.filter(Boolean).map(() => null)],
    nonSequences: [...nonSeqs, ...dNs],
    nSteps: inputs[0]!,
    name: `${op.name}.rop`,
  });
  const outs = forward.outputs as TensorVariable[];
  let r = nRec;
  const dStacked = taps.map((_, k) => (floatRec[k] ? outs[r++]! : undefined));
  const dNitsot = floatNitsot.map((f) => (f ? outs[r++]! : undefined));
  return [
    ...dStacked.map((d) => d ?? disconnected()),
    ...dNitsot.map((d) => d ?? disconnected()),
    // A final state's tangent is that of the last state: the initial one when no step runs.
    ...finals.map((k) => (dStacked[k] ? lastOr(dStacked[k]!, point(1 + nSeqs + k)) : disconnected())),
  ];
}
