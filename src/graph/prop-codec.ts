// The codec any op class gets from its `static props`: each prop written with its kind
// (`static propKinds`, prop-kinds.ts; plain JSON without one) and the op rebuilt as
// `new OpClass(...props)`, in the order of `static props`. Most ops need nothing else, so
// adding an op (weft's or a user's) means no codec to write; ops that hold a graph or a
// scalar program keep hand-written codecs.
import type { JsonObject } from './json-reader.js';
import { jsonProblem } from './json-reader.js';
import type { Op } from './op.js';
import type { OpCodec } from './op-codecs.js';
import { propKinds, type PropKind, type PropKindsOf } from './prop-kinds.js';

/** A class whose constructor takes its props in the order of `static props`. */
export interface PropsOpClass<O extends Op = Op> {
  new (...props: never[]): O;
  readonly name: string;
  readonly props: readonly string[];
  readonly propKinds?: PropKindsOf;
}

/** The codec derived from `opClass`'s props, named `name` in documents. */
export function propsCodec<O extends Op>(opClass: PropsOpClass<O>, name: string = opClass.name): OpCodec<O, unknown[]> {
  const props = [...opClass.props];
  const kinds = props.map((p) => (opClass.propKinds?.[p] ?? propKinds.json()) as PropKind<unknown>);
  const plain = props.map((p) => opClass.propKinds?.[p] === undefined);
  return {
    name,
    opClass,
    props,
    encode(op) {
      const out: Record<string, unknown> = {};
      props.forEach((p, i) => {
        const value = (op as unknown as Record<string, unknown>)[p];
        const json = kinds[i]!.encode(value);
        const problem = plain[i] ? jsonProblem(json, `${op}.${p}`) : undefined;
        if (problem) {
          throw new TypeError(`serialize: ${problem}; give ${opClass.name} a kind for '${p}' in static propKinds, or register a codec that writes it`);
        }
        out[p] = json;
      });
      return out as JsonObject;
    },
    decode(r) {
      r.object(props);
      return props.map((p, i) => kinds[i]!.read(r.field(p)));
    },
    build(values) {
      return new (opClass as unknown as new (...args: unknown[]) => O)(...values);
    },
  };
}
