// W7: compile time in FAST_RUN. (1) The element-wise graphs of bench/compile.ts (about 1k and
// 10k nodes; it checks FAST_RUN against FAST_COMPILE on seeded values itself). (2) 200 repeated
// residual blocks of about 20 nodes (a dense layer, gating, a layer norm, a residual sum), as
// one flat graph and as 200 applications of one OpFromGraph; each compiled function is checked
// against the same graph compiled in FAST_COMPILE. Each figure is the compile call alone; graphs
// are built fresh before each run, outside the timing.
import { compare } from '../lib/check.js';
import { uniform } from '../lib/data.js';
import type { Suite } from '../lib/suite.js';
import type { Workload } from '../lib/workload.js';
import { compileBench } from '../compile.js';
import { float32Data, pt, weft, type TV } from '../peers/weft.js';
import ndarray from 'ndarray';

const BLOCKS = 200;
const WIDTH = 16;
const ROWS = 4;
const BLOCK_GROUP = 'W7 200 blocks';
const FLAT = { group: BLOCK_GROUP, system: 'weft', config: 'flat graph' };

/** weft.OpFromGraph as API.md specifies it, looked up at run time (it may not exist yet). */
interface OpFromGraphLike {
  call(...inputs: TV[]): TV | TV[];
}
type OpFromGraphConstructor = new (inputs: readonly TV[], outputs: TV | readonly TV[], options?: { name?: string; inline?: boolean }) => OpFromGraphLike;

function opFromGraph(): OpFromGraphConstructor | undefined {
  const candidate = (weft as unknown as { OpFromGraph?: unknown }).OpFromGraph;
  return typeof candidate === 'function' ? (candidate as OpFromGraphConstructor) : undefined;
}

/** One residual block: about 20 nodes. */
function block(x: TV, w: TV, b: TV, g: TV): TV {
  const h = x.dot(w).add(b);
  const a = pt.tanh(h).mul(pt.sigmoid(h));
  const mean = a.mean({ axis: 1, keepdims: true });
  const centered = a.sub(mean);
  const variance = centered.sqr().mean({ axis: 1, keepdims: true });
  return centered.trueDiv(pt.sqrt(variance.add(1e-5))).mul(g).add(x);
}

interface BlockGraph {
  readonly inputs: TV[];
  readonly output: TV;
  readonly nodes: number;
}

function blockGraph(encapsulate: boolean): BlockGraph {
  const [x, w, b, g] = [pt.matrix('x', 'float32'), pt.matrix('w', 'float32'), pt.vector('b', 'float32'), pt.vector('g', 'float32')];
  let step: (v: TV) => TV = (v) => block(v, w, b, g);
  if (encapsulate) {
    const Ofg = opFromGraph()!;
    const [xi, wi, bi, gi] = [pt.matrix('xi', 'float32'), pt.matrix('wi', 'float32'), pt.vector('bi', 'float32'), pt.vector('gi', 'float32')];
    const op = new Ofg([xi, wi, bi, gi], block(xi, wi, bi, gi), { name: 'residual' });
    step = (v) => op.call(v, w, b, g) as TV;
  }
  let v: TV = x;
  for (let i = 0; i < BLOCKS; i++) v = step(v);
  return { inputs: [x, w, b, g], output: v, nodes: weft.ioToposort([], [v]).length };
}

async function elementwise(suite: Suite): Promise<void> {
  const results = await compileBench([1000, 10000], suite.quick ? 2 : 3);
  for (const r of results) {
    const rewriters = [...r.profile.rewrites.byRewriter].sort((a, b) => b[1].time - a[1].time).slice(0, 5);
    suite.record({
      group: 'W7 elemwise',
      system: 'weft',
      config: `${r.nodes} nodes, FAST_RUN`,
      unit: 'ms',
      value: r.ms,
      goals: r.size === 10000 ? [{ kind: 'value', label: '10k nodes under 1 s', atMost: 1000 }] : undefined,
      check: 'bench/compile.ts: FAST_RUN agrees with FAST_COMPILE on seeded values',
      note: `median of ${suite.quick ? 2 : 3} compiles (bench/compile.ts); ${r.after} nodes after rewriting`,
      info: {
        nodesAfter: r.after,
        cpuMs: r.cpuMs,
        firstMs: r.firstMs,
        minMs: r.minMs,
        topRewriters: Object.fromEntries(rewriters.map(([name, s]) => [name, { ms: s.time, calls: s.calls, applied: s.applied }])),
      },
    });
  }
}

async function blocks(suite: Suite): Promise<void> {
  const x = ndarray(uniform(ROWS * WIDTH, 71), [ROWS, WIDTH]);
  const w = ndarray(uniform(WIDTH * WIDTH, 72, -0.3, 0.3), [WIDTH, WIDTH]);
  const b = uniform(WIDTH, 73, -0.1, 0.1);
  const g = uniform(WIDTH, 74, 0.5, 1.5);
  const values = [x, w, b, g];
  // Both variants are checked against the flat graph compiled without rewrites of note.
  const flat = blockGraph(false);
  const slow = await weft.compile(flat.inputs, flat.output, { mode: 'FAST_COMPILE', workers: 0 });
  const want = float32Data(await slow(...values));

  for (const encapsulate of [false, true]) {
    const config = encapsulate ? 'OpFromGraph' : 'flat graph';
    if (encapsulate && !opFromGraph()) {
      suite.skip(
        { group: BLOCK_GROUP, system: 'weft', config, unit: 'ms', goals: [{ kind: 'speedup', label: '10x flat graph', vs: FLAT, atLeast: 10 }] },
        'weft.OpFromGraph does not exist yet',
      );
      continue;
    }
    let compileMs = 0;
    let firstCallMs = 0;
    let compiled: weft.WeftFunction<weft.NdArray> | undefined;
    let nodes = 0;
    await suite.measure({
      group: BLOCK_GROUP,
      system: 'weft',
      config,
      unit: 'ms',
      figure: (ms) => ms,
      reference: !encapsulate,
      goals: encapsulate ? [{ kind: 'speedup', label: '10x flat graph', vs: FLAT, atLeast: 10 }] : undefined,
      // The checked call is the first call of a fresh compile: it also times what compile left
      // for later (planning, and whatever an op prepares on first use).
      check: async () => {
        const started = performance.now();
        const got = float32Data(await compiled!(...values));
        firstCallMs = performance.now() - started;
        return compare('output after 200 blocks', got, want, { rtol: 1e-3 });
      },
      counts: { runs: 5, minRuns: 3 },
      setup: async () => ({
        run: async () => {
          const graph = blockGraph(encapsulate);
          nodes = graph.nodes;
          const started = performance.now();
          compiled = await weft.compile(graph.inputs, graph.output, { workers: 0 });
          compileMs = performance.now() - started;
        },
        lastMs: () => compileMs,
        get info() {
          return { nodesBefore: nodes, nodesAfter: compiled?.fgraph.toposort().length, firstCallMs };
        },
      }),
    });
  }
}

async function run(suite: Suite): Promise<void> {
  await elementwise(suite);
  await blocks(suite);
}

export const w7: Workload = { id: 'W7', title: 'compile time in FAST_RUN (ms per compile)', run };
