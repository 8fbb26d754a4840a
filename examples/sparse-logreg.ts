// Logistic regression on a sparse bag-of-words matrix: 2,000 documents over a vocabulary of
// 5,000 words, about 1% of the entries stored (CSR), labels from a hidden rule over the words.
// The scores are `weft.sparse.structuredDot(X, w)`, so the dense copy of X is never made, and the
// weights' gradient is the sparse product's gradient with respect to its dense side.
// `npx tsx examples/sparse-logreg.ts [epochs]`.
import * as weft from '../src/index.js';

const { pt, sparse } = weft;
const [DOCUMENTS, WORDS, WORDS_PER_DOCUMENT] = [2000, 5000, 50];
const EPOCHS = Number(process.argv[2] ?? 30);
const LEARNING_RATE = 2;

// A document: WORDS_PER_DOCUMENT distinct words, each counted once or twice; rows sorted, as
// scipy's canonical form (weft.sparse.csr would sort and sum them anyway).
const rng = new weft.Rng(11);
const draws = rng.uniform([DOCUMENTS * WORDS_PER_DOCUMENT * 2]).data;
let next = 0;
const indptr = [0];
const indices: number[] = [];
const counts: number[] = [];
for (let d = 0; d < DOCUMENTS; d++) {
  const words = new Set<number>();
  while (words.size < WORDS_PER_DOCUMENT) words.add(Math.floor(draws[next++ % draws.length]! * WORDS));
  for (const word of [...words].sort((a, b) => a - b)) {
    indices.push(word);
    counts.push(word % 7 === 0 ? 2 : 1);
  }
  indptr.push(indices.length);
}
const X = sparse.csr({ data: counts, indices, indptr, shape: [DOCUMENTS, WORDS] });

// The hidden rule: a score per word; a document is positive when its words' scores add up above 0.
const rule = rng.normal([WORDS]).data;
const labels = Float64Array.from({ length: DOCUMENTS }, (_, d) => {
  let s = 0;
  for (let k = indptr[d]!; k < indptr[d + 1]!; k++) s += counts[k]! * rule[indices[k]!]!;
  return s > 0 ? 1 : 0;
});

const x = sparse.csrMatrix('x');
const y = pt.vector('y');
const w = weft.shared(new Float64Array(WORDS), { name: 'w' });
const b = weft.shared(0, { name: 'b' });
// structuredDot of [documents, words] and [words, 1]: the scores as a column, then a vector.
const scores = sparse.structuredDot(x, w.dimshuffle(0, 'x')).get(weft.slice(null), 0).add(b);
const p1 = pt.sigmoid(scores);
const cost = pt.binaryCrossentropy(p1, y).mean().add(w.sqr().sum().mul(1e-4));
const [gw, gb] = weft.grad(cost, [w, b]);
const train = await weft.compile([x, y], cost, {
  updates: [
    [w, w.sub(gw!.mul(LEARNING_RATE))],
    [b, b.sub(gb!.mul(LEARNING_RATE))],
  ],
  name: 'train',
});
const predict = await weft.compile([x], p1.gt(0.5), { name: 'predict' });

console.log(`${DOCUMENTS} documents x ${WORDS} words, ${X.data.length} stored entries (${((100 * X.data.length) / (DOCUMENTS * WORDS)).toFixed(1)} %)`);
const losses: number[] = [];
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  losses.push((await train(X, labels)).data[0]!);
  if (epoch % Math.max(1, Math.floor(EPOCHS / 5)) === 0) console.log(`epoch ${epoch}: loss ${losses[losses.length - 1]!.toFixed(4)}`);
}
const predicted = (await predict(X)).data;
const correct = labels.reduce((n, label, i) => n + (Number(predicted[i]) === label ? 1 : 0), 0);
console.log(`loss ${losses[0]!.toFixed(4)} -> ${losses[losses.length - 1]!.toFixed(4)} over ${EPOCHS} steps; training accuracy ${((100 * correct) / DOCUMENTS).toFixed(1)} %`);
await weft.shutdown();
if (losses[losses.length - 1]! >= losses[0]!) throw new Error(`sparse logistic regression did not learn: loss ${losses[0]} -> ${losses[losses.length - 1]}`);
