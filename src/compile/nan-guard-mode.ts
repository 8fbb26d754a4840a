// NanGuardMode (Theano's): runs the rewritten graph on the calling thread and looks at every value
// as it appears, the function's inputs first, then each node's outputs, for NaN, infinities and
// big values (absolute value above 1e10). The first bad value stops the call with a NanGuardError
// that names the input, or the node and output, that held it and the index of the bad element.
import type { Apply } from '../graph/apply.js';
import { NodeError, performNode } from '../graph/node-error.js';
import { SharedVariable } from '../graph/shared.js';
import { isConstant, type Variable } from '../graph/variable.js';
import { dtypeOfTypedArray, isFloatDtype } from '../kernels/dtype.js';
import { flatValues, isNdArray, shapeText, type NdArray } from '../tensor/ndarray.js';
import { abortedBy } from '../scheduler/planned-executor.js';
import { Mode, registerModeName, type ModeOptions, type ModeRuntime, type RuntimeContext } from './mode.js';

/** Values above this in absolute value are "big" (Theano's threshold). */
export const BIG_VALUE = 1e10;

export type BadValueKind = 'nan' | 'inf' | 'big';

export class NanGuardError extends Error {
  constructor(
    message: string,
    readonly kind: BadValueKind,
    /** The C-order index of the first bad element. */
    readonly index: readonly number[],
    /** The bad element itself. */
    readonly value: number,
    /** Where it was: the node and which output, or which input of the function graph. */
    readonly where: { readonly node: Apply; readonly position: number; readonly output: number } | { readonly input: number },
  ) {
    super(message);
    this.name = 'NanGuardError';
  }
}

export interface NanGuardModeOptions extends ModeOptions {
  /** NaN is an error (default true). */
  readonly nanIsError?: boolean;
  /** +inf and -inf are errors (default true). */
  readonly infIsError?: boolean;
  /** Finite values whose absolute value exceeds 1e10 are errors (default true). */
  readonly bigIsError?: boolean;
}

interface Flags {
  readonly nan: boolean;
  readonly inf: boolean;
  readonly big: boolean;
}

interface BadValue {
  readonly kind: BadValueKind;
  readonly index: number[];
  readonly value: number;
}

function indexAt(k: number, shape: readonly number[]): number[] {
  const index = new Array<number>(shape.length).fill(0);
  let rest = k;
  for (let a = shape.length - 1; a >= 0; a--) {
    index[a] = rest % shape[a]!;
    rest = Math.floor(rest / shape[a]!);
  }
  return index;
}

/** The first element of a float array that the flags call bad, in C order. */
function firstBad(value: unknown, flags: Flags): BadValue | undefined {
  if (!isNdArray(value)) return undefined;
  const dtype = dtypeOfTypedArray(value.data);
  if (!dtype || !isFloatDtype(dtype)) return undefined;
  const flat = flatValues(value);
  for (let i = 0; i < flat.length; i++) {
    const x = flat[i]!;
    // Most elements are ordinary: one comparison decides, the rest only runs for suspects.
    if (x <= BIG_VALUE && x >= -BIG_VALUE) continue;
    const kind: BadValueKind = x !== x ? 'nan' : Number.isFinite(x) ? 'big' : 'inf';
    if (flags[kind]) return { kind, index: indexAt(i, value.shape), value: x };
  }
  return undefined;
}

function describe(bad: BadValue): string {
  switch (bad.kind) {
    case 'nan':
      return 'NaN';
    case 'inf':
      return bad.value > 0 ? 'inf' : '-inf';
    case 'big':
      return `${bad.value} (absolute value above ${BIG_VALUE.toExponential().replace('+', '')})`;
  }
}

class NanGuardRuntime implements ModeRuntime {
  readonly #context: RuntimeContext;
  readonly #flags: Flags;
  readonly #order: readonly Apply[];
  /** Variables whose value can be dropped once node k has run. */
  readonly #freeAfter: ReadonlyArray<readonly Variable[]>;

  constructor(context: RuntimeContext, flags: Flags) {
    this.#context = context;
    this.#flags = flags;
    const fg = context.fgraph;
    this.#order = fg.toposort();
    const lastUse = new Map<Variable, number>();
    this.#order.forEach((node, k) => node.inputs.forEach((v) => lastUse.set(v, k)));
    const kept = new Set([...fg.outputs, ...fg.inputs]);
    const freeAfter: Variable[][] = this.#order.map(() => []);
    for (const [v, k] of lastUse) if (!kept.has(v) && !isConstant(v)) freeAfter[k]!.push(v);
    this.#freeAfter = freeAfter;
  }

  async run(inputs: readonly NdArray[], signal?: AbortSignal): Promise<NdArray[]> {
    const { fgraph: fg, name } = this.#context;
    const values = new Map<Variable, unknown>();
    fg.inputs.forEach((v, i) => {
      const bad = firstBad(inputs[i], this.#flags);
      if (bad) {
        const who = v instanceof SharedVariable ? `shared variable ${v}` : `input ${i} (${v})`;
        throw new NanGuardError(
          `NanGuardMode: ${who} of ${name} holds ${describe(bad)}, first at index ${shapeText(bad.index)}`,
          bad.kind,
          bad.index,
          bad.value,
          { input: i },
        );
      }
      values.set(v, inputs[i]);
    });
    const valueOf = (v: Variable): unknown => {
      if (values.has(v)) return values.get(v);
      if (isConstant(v)) return v.data;
      throw new Error(`NanGuardMode: no value for ${v}`);
    };
    this.#order.forEach((node, k) => {
      if (signal?.aborted) throw abortedBy(signal, `${name}: the call was aborted`);
      const args = node.inputs.map(valueOf);
      const outs = performNode(node, k, args);
      node.outputs.forEach((o, j) => {
        const bad = firstBad(outs[j], this.#flags);
        if (bad) {
          throw new NanGuardError(
            `NanGuardMode: ${node.op} (node ${k}: ${node}) produced ${describe(bad)} in output ${j} (${o}), first at index ${shapeText(bad.index)}`,
            bad.kind,
            bad.index,
            bad.value,
            { node, position: k, output: j },
          );
        }
        values.set(o, outs[j]);
      });
      for (const v of this.#freeAfter[k]!) values.delete(v);
    });
    return fg.outputs.map(valueOf) as NdArray[];
  }
}

export class NanGuardMode extends Mode {
  readonly #flags: Flags;

  constructor(readonly guardOptions: NanGuardModeOptions = {}) {
    super({ ...guardOptions, name: guardOptions.name ?? 'NanGuardMode' });
    this.#flags = { nan: guardOptions.nanIsError ?? true, inf: guardOptions.infIsError ?? true, big: guardOptions.bigIsError ?? true };
  }

  override including(...tags: string[]): NanGuardMode {
    return new NanGuardMode({ ...this.guardOptions, including: [...(this.guardOptions.including ?? []), ...tags] });
  }

  override excluding(...tags: string[]): NanGuardMode {
    return new NanGuardMode({ ...this.guardOptions, excluding: [...(this.guardOptions.excluding ?? []), ...tags] });
  }

  override makeRuntime(context: RuntimeContext): ModeRuntime {
    return new NanGuardRuntime(context, this.#flags);
  }
}

registerModeName('NanGuardMode', () => new NanGuardMode());
