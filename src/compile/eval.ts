// Variable.eval: compiles the variable as a function of the given variables (cached per
// variable and set of givens) and runs it on the calling thread. Variables of any Type.
import { registerEvaluator } from '../graph/evaluate.js';
import { Variable } from '../graph/variable.js';
import { compile, type InputValue, type WeftFunction } from './function.js';

const cache = new WeakMap<Variable, Map<string, Promise<WeftFunction<unknown>>>>();

async function evaluateVariable(v: Variable, givens: ReadonlyMap<Variable, unknown>): Promise<unknown> {
  if (!(v instanceof Variable)) throw new TypeError(`eval: ${String(v)} is not a variable`);
  const keys = [...givens.keys()];
  keys.forEach((k, i) => {
    if (!(k instanceof Variable)) throw new TypeError(`eval: givens key ${i} (${String(k)}) is not a variable`);
  });
  const id = keys.map((k) => k.id).join(',');
  let byKeys = cache.get(v);
  if (!byKeys) {
    byKeys = new Map();
    cache.set(v, byKeys);
  }
  let fn = byKeys.get(id);
  if (!fn) {
    fn = compile(keys, v, { onUnusedInput: 'ignore', name: `eval(${v})` });
    byKeys.set(id, fn);
  }
  // The values are checked by the inputs' types when the call starts.
  return (await fn)(...([...givens.values()] as InputValue[]));
}

registerEvaluator(evaluateVariable);
