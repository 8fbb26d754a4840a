// The browser build (`npm run build:browser`): ES modules for browsers in dist/browser/, from the
// same sources as Node's build. weft.js is the library (src/index.ts), worker.js the Web Worker
// entry, kernels.js the `weft/kernels` API that users' kernel modules import; code they share
// lies in chunks beside them, so a page, its workers and kernel modules share one kernel registry
// per realm. Node's workers (threads.ts) are swapped for Web Workers (threads.browser.ts), and
// @stdlib's functions, loaded on first call in Node (kernels/stdlib.ts), are bundled.
import { build, type Plugin } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The browser forms of modules that need Node: threads, stdlib and cluster (and an error for any other). */
const browserThreads: Plugin = {
  name: 'weft-browser-threads',
  setup(b) {
    b.onResolve({ filter: /^\.\/threads\.js$/ }, (args) =>
      args.resolveDir.replace(/\\/g, '/').endsWith('/src/workers') ? { path: `${args.resolveDir}/threads.browser.ts` } : undefined,
    );
    // @stdlib's functions are loaded on first call in Node (a require); browsers get them bundled.
    b.onResolve({ filter: /^\.\/stdlib\.js$/ }, (args) =>
      args.resolveDir.replace(/\\/g, '/').endsWith('/src/kernels') ? { path: `${args.resolveDir}/stdlib.browser.ts` } : undefined,
    );
    // weft.cluster runs on Node (BullMQ, Redis): browsers get functions that say so.
    b.onResolve({ filter: /^\.\/cluster\/index\.js$/ }, (args) =>
      args.resolveDir.replace(/\\/g, '/').endsWith('/src') ? { path: `${args.resolveDir}/cluster/index.browser.ts` } : undefined,
    );
    // Nothing reached from the browser entries may need Node.
    b.onResolve({ filter: /^(node:|piscina$)/ }, (args) => ({
      errors: [{ text: `${args.path} is imported by ${args.importer}: browser code must not import Node modules` }],
    }));
  },
};

/** Writes the browser bundles to dist/browser/. */
export async function buildBrowser(): Promise<void> {
  await build({
    absWorkingDir: root,
    entryPoints: { weft: 'src/index.ts', worker: 'src/workers/web-worker.ts', kernels: 'src/kernels/index.ts' },
    outdir: 'dist/browser',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    sourcemap: true,
    logLevel: 'warning',
    plugins: [browserThreads],
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  await buildBrowser();
  console.log(`dist/browser: weft.js, worker.js, kernels.js (${Math.round(performance.now() - started)} ms)`);
}
