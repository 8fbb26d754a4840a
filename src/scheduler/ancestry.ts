// Ancestry between the nodes of a plan (is a an ancestor of b?), which buffer reuse asks of
// many pairs. Nodes are covered by chains (sequences ordered by ancestry) and each node keeps, per
// chain, the last position on it that is its ancestor: a vector clock, about n x chains integers.
// A graph so wide that this outgrows a bitset of n x n bits is answered with the bitset instead.

/** Whether node `a` is a strict ancestor of node `of` (both positions in topological order). */
export type IsAncestor = (a: number, of: number) => boolean;

export type AncestryForm = 'chains' | 'bitsets';

/**
 * Ancestry of `n` nodes in topological order, `preds(k)` giving the direct predecessors of node
 * k (all before k). `form` forces one representation (tests); by default vector clocks, unless
 * the graph needs more chains than a bitset has words.
 */
export function buildAncestry(n: number, preds: (k: number) => Iterable<number>, form?: AncestryForm): { isAncestor: IsAncestor; form: AncestryForm } {
  const direct = Array.from({ length: n }, (_, k) => [...new Set(preds(k))]);
  const words = Math.ceil(n / 32);
  if (form !== 'bitsets') {
    const clocks = vectorClocks(direct, form === 'chains' ? Infinity : words);
    if (clocks) return { isAncestor: clocks, form: 'chains' };
  }
  return { isAncestor: bitsets(direct, words), form: 'bitsets' };
}

/**
 * Vector clocks over a greedy chain cover: each node joins a chain whose last node is already
 * its ancestor (so the nodes of a chain are ordered by ancestry), or starts one. A node's clock
 * holds, per chain that existed before it, the last position on that chain among its ancestors
 * (-1: none); chains started later hold no ancestor of it. Undefined past `maxChains` chains.
 */
function vectorClocks(direct: readonly (readonly number[])[], maxChains: number): IsAncestor | undefined {
  const n = direct.length;
  const chainOf = new Int32Array(n);
  const posOf = new Int32Array(n);
  const clocks: Int32Array[] = [];
  /** Per chain: the position of its last node. */
  const lastPos: number[] = [];
  for (let k = 0; k < n; k++) {
    const clock = new Int32Array(lastPos.length).fill(-1);
    for (const p of direct[k]!) {
      const from = clocks[p]!;
      for (let c = 0; c < from.length; c++) if (from[c]! > clock[c]!) clock[c] = from[c]!;
      if (posOf[p]! > clock[chainOf[p]!]!) clock[chainOf[p]!] = posOf[p]!;
    }
    let chain = -1;
    for (const p of direct[k]!) {
      if (lastPos[chainOf[p]!] === posOf[p]) {
        chain = chainOf[p]!;
        break;
      }
    }
    if (chain < 0) for (let c = 0; c < clock.length && chain < 0; c++) if (clock[c] === lastPos[c]) chain = c;
    if (chain < 0) {
      if (lastPos.length >= maxChains) return undefined;
      chain = lastPos.length;
      lastPos.push(-1);
    }
    chainOf[k] = chain;
    posOf[k] = lastPos[chain]! + 1;
    lastPos[chain] = posOf[k]!;
    clocks.push(clock);
  }
  return (a, of) => {
    const clock = clocks[of]!;
    const c = chainOf[a]!;
    return c < clock.length && clock[c]! >= posOf[a]!;
  };
}

function bitsets(direct: readonly (readonly number[])[], words: number): IsAncestor {
  const n = direct.length;
  const ancestors = new Uint32Array(n * words);
  for (let k = 0; k < n; k++) {
    const row = k * words;
    for (const p of direct[k]!) {
      ancestors[row + (p >> 5)]! |= 1 << (p & 31);
      for (let w = 0; w < words; w++) ancestors[row + w]! |= ancestors[p * words + w]!;
    }
  }
  return (a, of) => (ancestors[of * words + (a >> 5)]! & (1 << (a & 31))) !== 0;
}
