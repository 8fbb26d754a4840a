// `npm run demo:browser`: serves the browser demo page (examples/browser) and weft's browser build
// cross-origin isolated on localhost, and prints its URL. Open it in Chrome, Edge or Firefox: it
// trains an MLP on Web Workers and draws the loss and the last call's timeline. PORT picks the port.
import { fileURLToPath } from 'node:url';
import { fileOrModule, serveIsolated, type IsolatedServer, type Served } from './isolated-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));

async function load(path: string): Promise<Served | undefined> {
  if (path === '/') return fileOrModule(`${root}examples/browser/index.html`, '/index.html');
  if (!/^\/(dist\/browser|examples\/browser)\/[\w.-]+$/.test(path)) return undefined;
  return fileOrModule(root + path.slice(1), path);
}

/** The demo's server on `port` (0: any free port). */
export function serveDemo(port = 0): Promise<IsolatedServer> {
  return serveIsolated(load, port);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serveDemo(Number(process.env.PORT ?? 8080));
  console.log(`weft browser demo: ${server.url}/ (cross-origin isolated; Ctrl-C to stop)`);
}
