// Special cases that run faster: powers with small constant exponents become sqr, sqrt and
// reciprocals; sums of scaled matrix products become one Gemm call; element-wise ops read the
// values of Allocs their other inputs already broadcast.
import { isFloatDtype } from '../../kernels/dtype.js';
import { nodeRewriter } from '../../graph/rewriting/rewriter.js';
import { registerSpecialize } from '../../graph/rewriting/optdb.js';
import { constant } from '../core/as-tensor.js';
import { Alloc } from '../shape/alloc.js';
import { DimShuffle, dimshuffle } from '../shape/dimshuffle.js';
import { Elemwise } from '../elemwise/elemwise.js';
import { gemm } from '../linalg/gemm.js';
import { Dot } from '../linalg/linalg.js';
import { add, cast, mul, neg, sqr, sqrt, trueDiv } from '../elemwise/math.js';
import * as S from '../scalar/catalog.js';
import type { TensorVariable } from '../core/variable.js';
import { asTypeOf, filledLike } from './like.js';
import { elemwiseOf, ownerIs, scalarConstantValue } from './match.js';

registerSpecialize(
  nodeRewriter('pow_specialize', [elemwiseOf(S.pow)], (node, fg) => {
    const [base, y] = node.inputs as TensorVariable[];
    const out = node.outputs[0] as TensorVariable;
    const e = scalarConstantValue(y!);
    if (e === undefined || (!isFloatDtype(out.dtype) && (e < 0 || !Number.isInteger(e)))) return false;
    if (e === 0) {
      const ones = filledLike(1, out, fg);
      return ones ? [ones] : false;
    }
    // The power is computed in the output's dtype (a float32 x to a float64 2 is a float64 square).
    const x = cast(base!, out.dtype);
    let r: TensorVariable;
    switch (e) {
      case 1: r = x; break;
      case 2: r = sqr(x); break;
      case 0.5: r = sqrt(x); break;
      case -0.5: r = trueDiv(1, sqrt(x)); break;
      case -1: r = trueDiv(1, x); break;
      case -2: r = trueDiv(1, sqr(x)); break;
      default: return false;
    }
    const fitted = asTypeOf(r, out, fg);
    return fitted ? [fitted] : false;
  }),
  'algebra',
);

/** A 0-d version of a scalar-like variable (0-d, or a broadcast of a 0-d value), if it is one. */
function asScalar(v: TensorVariable): TensorVariable | number | undefined {
  const c = scalarConstantValue(v);
  if (c !== undefined) return c;
  if (v.ndim === 0) return v;
  const node = v.owner;
  if (node?.op instanceof DimShuffle && (node.inputs[0] as TensorVariable).ndim === 0) return node.inputs[0] as TensorVariable;
  return undefined;
}

interface Term {
  coef: TensorVariable | number;
  value: TensorVariable;
}

/** An operand of a sum as coefficient x value: v, -v, c*v or v*c with c scalar-like. */
function asTerm(v: TensorVariable, sign: number): Term {
  const n = ownerIs(v, S.neg);
  if (n) return asTerm(n.inputs[0] as TensorVariable, -sign);
  const m = ownerIs(v, S.mul);
  if (m && m.inputs.length === 2) {
    const [p, q] = m.inputs as TensorVariable[];
    const cp = asScalar(p!);
    if (cp !== undefined && q!.ndim === v.ndim) return { coef: sign === 1 ? cp : typeof cp === 'number' ? -cp : neg(cp), value: q! };
    const cq = asScalar(q!);
    if (cq !== undefined && p!.ndim === v.ndim) return { coef: sign === 1 ? cq : typeof cq === 'number' ? -cq : neg(cq), value: p! };
  }
  return { coef: sign, value: v };
}

/** z * b + a * dot(x, y) (in any order, with subtractions) -> Gemm(z, a, x, y, b). */
registerSpecialize(
  nodeRewriter('gemm_from_add', [elemwiseOf(S.add), elemwiseOf(S.sub)], (node, fg) => {
    const out = node.outputs[0] as TensorVariable;
    if (out.ndim !== 2 || !isFloatDtype(out.dtype)) return false;
    const operands = node.inputs as TensorVariable[];
    const terms = (node.op as Elemwise).scalarOp === S.sub ? [asTerm(operands[0]!, 1), asTerm(operands[1]!, -1)] : operands.map((v) => asTerm(v, 1));
    const full = (v: TensorVariable): boolean => v.ndim === 2 && v.dtype === out.dtype && v.type.shape.every((d, i) => (d === 1) === (out.type.shape[i] === 1));
    const i = terms.findIndex((t) => {
      const d = t.value.owner;
      return d?.op instanceof Dot && d.inputs.every((x) => (x as TensorVariable).ndim === 2) && full(t.value) && fg.clients(t.value).length === 1;
    });
    if (i < 0) return false;
    const j = terms.findIndex((t, k) => k !== i && full(t.value) && !(t.value.owner?.op instanceof Dot && k < i));
    if (j < 0) return false;
    const toScalar = (c: TensorVariable | number): TensorVariable => (typeof c === 'number' ? constant(c, { dtype: out.dtype }) : cast(c, out.dtype));
    // Dot's dtype is the upcast of its operands', so casting them to it loses nothing.
    const [x, y] = (terms[i]!.value.owner!.inputs as TensorVariable[]).map((v) => cast(v, out.dtype));
    const g = gemm(terms[j]!.value, toScalar(terms[i]!.coef), x!, y!, toScalar(terms[j]!.coef));
    const rest = terms.filter((_, k) => k !== i && k !== j).map((t) => (t.coef === 1 ? t.value : mul(toScalar(t.coef), t.value)));
    const r = asTypeOf(rest.length === 0 ? g : add(g, ...rest), out, fg);
    return r ? [r] : false;
  }),
  'gemm',
);

/**
 * An element-wise op reads an Alloc's value where its other inputs give the output's shape
 * (PyTensor's local_elemwise_alloc): f(alloc(c, n, m), y) -> f(c, y) when y spans every axis the
 * output has, as the gradient of a sum leaves (a fill of the output gradient times the rest).
 * Tagged 'shape_unsafe' as PyTensor's: an Alloc whose lengths disagree with y's no longer fails.
 */
registerSpecialize(
  nodeRewriter('local_elemwise_alloc', [Elemwise], (node, fg) => {
    if (node.inputs.length < 2) return false;
    const out = node.outputs[0] as TensorVariable;
    const inputs = node.inputs as TensorVariable[];
    const allocated = inputs.map((v) => (v.owner?.op instanceof Alloc ? v : undefined));
    if (allocated.every((a) => a === undefined)) return false;
    // Every axis the output does not broadcast is spanned by an input that stays.
    const kept = inputs.filter((_, i) => allocated[i] === undefined);
    if (!out.type.shape.every((d, a) => d === 1 || kept.some((v) => v.type.shape[a] !== 1))) return false;
    const replaced = inputs.map((v, i) => {
      if (!allocated[i]) return v;
      const value = v.owner!.inputs[0] as TensorVariable;
      const lead = v.ndim - value.ndim;
      return lead === 0 ? value : dimshuffle(value, [...Array<'x'>(lead).fill('x'), ...[...Array(value.ndim).keys()]]);
    });
    const r = asTypeOf(node.op.call(...replaced) as TensorVariable, out, fg);
    return r ? [r] : false;
  }),
  'shape_unsafe',
);
