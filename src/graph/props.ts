// Turns an op's props into a canonical string: the basis of op equality and hashing (Theano's
// __props__). Numbers, strings, booleans, null, arrays, plain objects (keys sorted) and anything
// with its own `key` (ops, types) are allowed; anything else is a programming error.

export interface Keyed {
  readonly key: string;
}

function isKeyed(x: object): x is Keyed {
  return typeof (x as { key?: unknown }).key === 'string';
}

export function propKey(value: unknown, where = 'prop'): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return String(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v, i) => propKey(v, `${where}[${i}]`)).join(',')}]`;
      if (isKeyed(value)) return value.key;
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) {
        const entries = Object.keys(value as object)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${propKey((value as Record<string, unknown>)[k], `${where}.${k}`)}`);
        return `{${entries.join(',')}}`;
      }
      break;
    }
  }
  throw new TypeError(
    `${where}: op props must be numbers, strings, booleans, null, arrays, plain objects or keyed objects (ops, types); got ${Object.prototype.toString.call(value)}`,
  );
}

/** A short, readable rendering of a prop value for op names such as `Sum{axis=[0]}`. */
export function propLabel(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return `[${value.map(propLabel).join(',')}]`;
  if (typeof value === 'object') return isKeyed(value) ? String(value) : propKey(value);
  return String(value);
}
