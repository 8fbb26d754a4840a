// The browser test's web server (scripts/isolated-server.ts, cross-origin isolated so the page has
// SharedArrayBuffer): weft's browser bundles, the test page and this folder's modules.
import { fileURLToPath } from 'node:url';
import { fileOrModule, serveIsolated, TYPES, type IsolatedServer, type Served } from '../../scripts/isolated-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>weft in the browser</title><link rel="icon" href="data:,">
<script type="module" src="/test/browser/page.js"></script></head>
<body>weft browser test</body></html>`;

/** The body and type of `path`, or undefined: only the bundles and this folder are served. */
async function load(path: string): Promise<Served | undefined> {
  if (path === '/') return { body: PAGE, type: TYPES['.html']! };
  if (!/^\/(dist\/browser|test\/browser)\/[\w.-]+$/.test(path)) return undefined;
  // Test modules are written in TypeScript and asked for by their .js names (as their imports say).
  return fileOrModule(root + path.slice(1), path);
}

export type TestServer = IsolatedServer;

export function serve(): Promise<TestServer> {
  return serveIsolated(load);
}
