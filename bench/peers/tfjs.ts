// TensorFlow.js as a peer: the union package (its Node bundle registers the kernels' gradients,
// which W4 needs) with the cpu backend and the WebAssembly backend (SIMD; single-threaded under
// Node). One engine serves both backends; `use` switches and silences tfjs's Node banner.
type Tf = typeof import('@tensorflow/tfjs');
export type { Tf };

export interface TfjsPeer {
  readonly tf: Tf;
  /** Makes `backend` the active one (tensors made before belong to the previous one). */
  use(backend: 'cpu' | 'wasm'): Promise<Tf>;
}

let loading: Promise<TfjsPeer> | undefined;

async function quietly<T>(f: () => Promise<T>): Promise<T> {
  const { log, warn, info } = console;
  console.log = console.warn = console.info = () => {};
  try {
    return await f();
  } finally {
    Object.assign(console, { log, warn, info });
  }
}

async function load(): Promise<TfjsPeer> {
  const mod = (await import('@tensorflow/tfjs')) as Tf & { default?: Tf };
  const tf = mod.default ?? mod;
  await import('@tensorflow/tfjs-backend-wasm');
  return {
    tf,
    async use(backend) {
      return quietly(async () => {
        if (!(await tf.setBackend(backend))) throw new Error(`tfjs backend ${backend} did not initialize`);
        await tf.ready();
        tf.tidy(() => tf.scalar(1).add(1).dataSync());
        return tf;
      });
    },
  };
}

/** The peer, loaded once; rejects with the reason when it cannot run here. */
export function loadTfjs(): Promise<TfjsPeer> {
  return (loading ??= load());
}
