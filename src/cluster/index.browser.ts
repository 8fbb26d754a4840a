// weft.cluster in a browser build: the same names, which explain that the cluster runs on Node
// (BullMQ needs Redis connections a page cannot open).
export const MAX_FRAME_BYTES = 64 * 2 ** 20;

function nodeOnly(name: string): never {
  throw new Error(`weft.cluster.${name} runs on Node.js (BullMQ over Redis); a browser page cannot call it`);
}

export async function serve(): Promise<never> {
  return nodeOnly('serve');
}

export async function connect(): Promise<never> {
  return nodeOnly('connect');
}
