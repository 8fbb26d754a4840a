// jax-js as a peer, on its WebAssembly device (under Node its default init probes WebGPU, which
// is absent). Its arrays are reference-counted: functions consume their arguments, so callers
// pass `x.ref` to keep x, and dataSync consumes the array it reads.
type Jax = typeof import('@jax-js/jax');
export type { Jax };

let loading: Promise<Jax> | undefined;

async function load(): Promise<Jax> {
  const jax = (await import('@jax-js/jax')) as Jax;
  const devices = await jax.init('cpu', 'wasm');
  if (!devices.includes('wasm')) throw new Error(`jax-js started only ${devices.join(', ')}, not wasm`);
  jax.defaultDevice('wasm');
  return jax;
}

/** jax-js, initialized once; rejects with the reason when it cannot run here. */
export function loadJax(): Promise<Jax> {
  return (loading ??= load());
}
