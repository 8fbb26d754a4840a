// Type-level checks of the public API (issue 21 item 12): what a user's editor and `tsc --strict`
// see. test/typecheck.test.ts compiles this file with the project; each expect-error directive
// below fails the compile if the error it expects goes away.
import * as weft from '../../src/index.js';

const { pt } = weft;

/** Compiles only if `A` and `B` are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(): T | undefined {
  return undefined;
}

export async function compiledCalls(): Promise<void> {
  const x = pt.vector('x');
  const y = pt.vector('y');
  // One output: one ndarray; a list: an array; the arguments are one value per input.
  const one = await weft.compile([x, y], x.add(y));
  const z = await one([1, 2], new Float64Array([3, 4]));
  expectType<Equal<typeof z, weft.NdArray>>();
  const both = await weft.compile([x, y], [x.add(y), x.mul(y)]);
  const zs = await both([1, 2], [3, 4], { signal: new AbortController().signal });
  expectType<Equal<typeof zs, weft.NdArray[]>>();
  // @ts-expect-error: two inputs take two values
  await one([1, 2]);
  // @ts-expect-error: a string is not a tensor value
  await one([1, 2], 'three');
  // profile: true makes fn.profile defined
  const profiled = await weft.compile([x], x.sum(), { profile: true });
  expectType<Equal<typeof profiled.profile, weft.FunctionProfile>>();
  profiled.profile.toString();
  const plain = await weft.compile([x], x.sum());
  expectType<Equal<typeof plain.profile, weft.FunctionProfile | undefined>>();
  // Any compiled function serializes.
  weft.serialize(profiled);
  weft.serialize(both);
}

export function ops(): void {
  const [a, b] = [pt.scalar('a'), pt.scalar('b')];
  const single = new weft.OpFromGraph([a, b], [a.add(b)]);
  expectType<Equal<ReturnType<typeof single.call>, weft.TensorVariable>>();
  const pair = new weft.OpFromGraph([a, b], [a.add(b), a.mul(b)]);
  expectType<Equal<ReturnType<typeof pair.call>, weft.TensorVariable[]>>();
  const bare = new weft.OpFromGraph([a], a.mul(2));
  expectType<Equal<ReturnType<typeof bare.call>, weft.TensorVariable>>();
  const median = weft.asOp({ itypes: [new weft.TensorType('float64', [null])], otypes: [new weft.TensorType('float64', [])] }, (v) => v.data[0]);
  expectType<Equal<ReturnType<typeof median.call>, weft.TensorVariable>>();
  const two = weft.asOp({ itypes: [], otypes: [new weft.TensorType('float64', []), new weft.TensorType('float64', [])] }, () => [1, 2]);
  expectType<Equal<ReturnType<typeof two.call>, weft.TensorVariable[]>>();
}

export function values(): void {
  const w = weft.shared([1, 2, 3], { name: 'w' });
  w.setValue([4, 5, 6]);
  w.setValue(new Float32Array([1]));
  // @ts-expect-error: a shared tensor's value is a tensor value, not a string
  w.setValue('four');
  const m = weft.ndarray(new Float64Array([1, 2, 3, 4]), [2, 2]);
  const rows = weft.tolist<number[][]>(m);
  const corner: number = rows[1]![1]!;
  expectType<Equal<ReturnType<typeof weft.tolist>, weft.NestedList>>();
  void corner;
}
