// Tensor types and values in graph documents: a type is `{ dtype, shape }` (random states add
// `kind: "randomState"`), a value `{ dtype, shape, data }` with its elements in C order as JSON
// numbers, and NaN, Infinity, -Infinity and -0 spelled as strings (JSON has no spelling for
// them), so float values read back bit for bit.
import { DTYPES, STORAGE, intRange, isFloatDtype } from '../../kernels/dtype.js';
import { JsonReader, DeserializeError, type Json, type JsonObject } from '../../graph/json-reader.js';
import type { ElementBudget, TypeCodec } from '../../graph/serialize.js';
import type { SharedVariable } from '../../graph/shared.js';
import type { Type } from '../../graph/type.js';
import { flatValues, isNdArray, makeNdArray, type NdArray } from '../core/ndarray.js';
import { RandomStateType, randomStateType } from '../random/random.js';
import { TensorType } from '../core/type.js';
import { TensorSharedVariable } from '../core/variable.js';

/** More axes than this is not a tensor weft can hold (NumPy's limit is 64). */
export const MAX_NDIM = 64;
const MAX_LENGTH = 2 ** 31 - 1;

const SPECIAL_NUMBERS = new Map<string, number>([
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-0', -0],
]);

/** A number as JSON: itself, or the name of a value JSON cannot spell. */
export function encodeNumber(x: number): number | string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (Object.is(x, -0)) return '-0';
  return x;
}

function tensorType(t: Type, what: string): TensorType {
  if (!(t instanceof TensorType)) throw new TypeError(`serialize: ${what} has the type ${t}; only tensor types can be serialized`);
  return t;
}

function readDtype(r: JsonReader) {
  return r.oneOf(DTYPES);
}

/** The elements of `raw` as a typed array of `dtype`, each checked. */
function readData(r: JsonReader, raw: readonly unknown[], dtype: TensorType['dtype']): NdArray['data'] {
  const out = new STORAGE[dtype](raw.length);
  if (isFloatDtype(dtype)) {
    for (let i = 0; i < raw.length; i++) {
      const x = raw[i];
      if (typeof x === 'number' && Number.isFinite(x)) out[i] = x;
      else {
        const special = typeof x === 'string' ? SPECIAL_NUMBERS.get(x) : undefined;
        out[i] = special ?? new JsonReader(x, r.at(i)).fail('a finite number or one of "NaN", "Infinity", "-Infinity", "-0"');
      }
    }
    return out;
  }
  const [lo, hi] = intRange(dtype);
  for (let i = 0; i < raw.length; i++) {
    const x = raw[i];
    out[i] = typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi ? x : new JsonReader(x, r.at(i)).fail(`an integer from ${lo} to ${hi} (${dtype})`);
  }
  return out;
}

/** The marker of the types of generator states (`kind`), which are uint32 vectors of unknown length. */
const RANDOM_STATE = 'randomState';

export const tensorTypeCodec: TypeCodec = {
  encodeType(t: Type): JsonObject {
    const tt = tensorType(t, 'a variable');
    const encoded = { dtype: tt.dtype, shape: [...tt.shape] };
    return tt instanceof RandomStateType ? { ...encoded, kind: RANDOM_STATE } : encoded;
  },

  readType(r: JsonReader): TensorType {
    r.object(['dtype', 'shape', 'kind'], ['dtype', 'shape']);
    const dtype = readDtype(r.field('dtype'));
    const shape = r
      .field('shape')
      .array(MAX_NDIM)
      .map((d) => (d.value === null ? null : d.int(0, MAX_LENGTH)));
    const kind = r.optional('kind');
    if (kind === undefined) return new TensorType(dtype, shape);
    kind.oneOf([RANDOM_STATE]);
    const state = randomStateType();
    if (dtype !== state.dtype || shape.length !== 1 || shape[0] !== null) {
      r.error(`a random state type is a uint32 vector of unknown length (shape [null]), got ${dtype} of shape [${shape.map((d) => d ?? 'null').join(', ')}]`);
    }
    return state;
  },

  encodeValue(t: Type, value: unknown): JsonObject {
    const tt = tensorType(t, 'a value');
    if (!isNdArray(value)) throw new TypeError(`serialize: expected an ndarray value for ${tt}`);
    const flat = flatValues(value);
    const data: Json[] = new Array(flat.length);
    for (let i = 0; i < flat.length; i++) data[i] = encodeNumber(flat[i]!);
    return { dtype: tt.dtype, shape: [...value.shape], data };
  },

  readValue(r: JsonReader, t: Type, budget: ElementBudget): NdArray {
    const type = t as TensorType;
    r.object(['dtype', 'shape', 'data']);
    const dtypeReader = r.field('dtype');
    const dtype = readDtype(dtypeReader);
    if (dtype !== type.dtype) dtypeReader.error(`expected "${type.dtype}" (the dtype of ${type}), got "${dtype}"`);
    const shapeReader = r.field('shape');
    const dims = shapeReader.array(MAX_NDIM).map((d) => d.int(0, MAX_LENGTH));
    if (dims.length !== type.ndim) shapeReader.error(`expected ${type.ndim} lengths (the value of a ${type}), got ${dims.length}`);
    type.shape.forEach((d, a) => {
      if (d !== null && dims[a] !== d) new JsonReader(dims[a], shapeReader.at(a)).fail(`${d} (${type} has that static length)`);
    });
    // The element count, checked against the budget as it grows (it may be astronomically large).
    let size = 1;
    for (const d of dims) {
      size *= d;
      if (size > budget.left) break;
    }
    budget.take(size, shapeReader, `a value of shape [${dims.join(', ')}]`);
    const dataReader = r.field('data');
    const raw = dataReader.rawArray();
    if (raw.length !== size) dataReader.error(`expected ${size} elements (shape [${dims.join(', ')}]), got ${raw.length}`);
    const nd = makeNdArray(readData(dataReader, raw, dtype), dims);
    try {
      return type.filter(nd, { strict: true, what: r.path });
    } catch (e) {
      // The error names the value by its path, which the DeserializeError puts in front.
      const message = (e as Error).message;
      throw new DeserializeError(r.path, message.startsWith(`${r.path}: `) ? message.slice(r.path.length + 2) : message);
    }
  },

  makeShared(t: Type, value: unknown, name: string | undefined): SharedVariable {
    return new TensorSharedVariable(t as TensorType, value as NdArray, name);
  },
};
