// The options objects of weft.pt's functions (`{ axis }`, `{ side }`, ...), checked where they
// come in. An axis may come alone, as in PyTensor (`x.sum(1)`, `cumsum(x, 0)`); anything else
// that is not a plain object with known keys is refused: a value in the options' place, or a
// misspelt key, would otherwise be ignored and the default used without a word.

/** `options` (`{}` when omitted) if it is a plain object whose keys are all `known`; else a TypeError naming `where`. */
export function checkedOptions<O extends object>(where: string, options: O | undefined, known: readonly (keyof O & string)[]): O {
  if (options === undefined) return {} as O;
  if (!isPlainObject(options)) throw new TypeError(`${where}: expected options such as { ${known.join(', ')} }, got ${describe(options)}`);
  return withKnownKeys(where, options, known);
}

/**
 * The options of a function that takes an axis, given as options or as the axis alone (a number,
 * or an array of numbers where `axes` says several may be given). Anything else is refused.
 */
export function axisOptionsOf<O extends { readonly axis?: unknown }>(where: string, value: O | number | readonly number[] | undefined, known: readonly (keyof O & string)[], axes: boolean): O {
  if (value === undefined) return {} as O;
  if (typeof value === 'number' || (axes && Array.isArray(value))) return { axis: value } as O;
  if (!isPlainObject(value)) {
    throw new TypeError(`${where}: expected an axis (${axes ? 'a number or an array of numbers' : 'a number'}) or options such as { ${known.join(', ')} }, got ${describe(value)}`);
  }
  return withKnownKeys(where, value as O, known);
}

function withKnownKeys<O extends object>(where: string, options: O, known: readonly string[]): O {
  for (const key of Object.keys(options)) if (!known.includes(key)) throw new TypeError(`${where}: unknown option '${key}' (the options are ${known.join(', ')})`);
  return options;
}

function isPlainObject(x: unknown): x is object {
  return typeof x === 'object' && x !== null && Object.getPrototypeOf(x) === Object.prototype;
}

function describe(x: unknown): string {
  if (x === null) return 'null';
  return `${typeof x === 'object' ? ((x as object).constructor?.name ?? 'an object') : typeof x} ${String(x)}`;
}
