// Generated WebAssembly modules, compiled once per key in each thread and instantiated once per
// memory they run over: every kernel that emits code (element-wise loops, reductions, softmax)
// keeps its modules here, and turns an instance's exports into its own typed functions.

const modules = new Map<string, WebAssembly.Module>();
const instances = new WeakMap<WebAssembly.Memory, Map<string, unknown>>();

/**
 * What `wrap` makes of the instance, over `memory`, of the module known by `key` (whose bytes,
 * or compiled module, `source` gives the first time): compiled and wrapped once, then recalled.
 */
export function instanceFor<T>(memory: WebAssembly.Memory, key: string, source: () => Uint8Array<ArrayBuffer> | WebAssembly.Module, wrap: (exports: WebAssembly.Exports) => T): T {
  let mine = instances.get(memory);
  if (!mine) instances.set(memory, (mine = new Map()));
  const known = mine.get(key) as T | undefined;
  if (known !== undefined) return known;
  let compiled = modules.get(key);
  if (!compiled) {
    const given = source();
    modules.set(key, (compiled = given instanceof WebAssembly.Module ? given : new WebAssembly.Module(given)));
  }
  const made = wrap(new WebAssembly.Instance(compiled, { env: { memory } }).exports);
  mine.set(key, made);
  return made;
}
