// NanGuardMode (Theano's): runs the rewritten graph on the calling thread and looks at every value
// as it appears, the function's inputs first, then each node's outputs, for NaN, infinities and
// big values (absolute value above 1e10). The first bad value stops the call with a NanGuardError
// that names the input, or the node and output, that held it and the index of the bad element.
import type { Apply } from '../graph/apply.js';
import { ReferenceExecutor } from '../graph/reference-executor.js';
import { SharedVariable } from '../graph/shared.js';
import { dtypeOfTypedArray, isFloatDtype } from '../kernels/dtype.js';
import { flatValues, isNdArray, shapeText, type NdArray } from '../tensor/core/ndarray.js';
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

/** The reference executor with a look at each value as it appears. */
class NanGuardRuntime implements ModeRuntime {
  readonly #context: RuntimeContext;
  readonly #flags: Flags;
  readonly #executor: ReferenceExecutor;

  constructor(context: RuntimeContext, flags: Flags) {
    this.#context = context;
    this.#flags = flags;
    this.#executor = new ReferenceExecutor(context.fgraph);
  }

  async run(inputs: readonly NdArray[], signal?: AbortSignal): Promise<NdArray[]> {
    const name = this.#context.name;
    const flags = this.#flags;
    return this.#executor.run(inputs, {
      inputsAreCopies: true,
      signal,
      aborted: (s) => abortedBy(s, `${name}: the call was aborted`),
      input: (i, v, value) => {
        const bad = firstBad(value, flags);
        if (!bad) return;
        const who = v instanceof SharedVariable ? `shared variable ${v}` : `input ${i} (${v})`;
        throw new NanGuardError(`NanGuardMode: ${who} of ${name} holds ${describe(bad)}, first at index ${shapeText(bad.index)}`, bad.kind, bad.index, bad.value, {
          input: i,
        });
      },
      after: (node, k, { outputs }) => {
        node.outputs.forEach((o, j) => {
          const bad = firstBad(outputs[j], flags);
          if (!bad) return;
          throw new NanGuardError(
            `NanGuardMode: ${node.op} (node ${k}: ${node}) produced ${describe(bad)} in output ${j} (${o}), first at index ${shapeText(bad.index)}`,
            bad.kind,
            bad.index,
            bad.value,
            { node, position: k, output: j },
          );
        });
      },
    }) as NdArray[];
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
