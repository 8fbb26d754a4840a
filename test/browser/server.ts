// The browser test's web server (node:http, on 127.0.0.1): it serves weft's browser bundles and
// the test page cross-origin isolated (COOP same-origin, COEP require-corp), so that the page has
// SharedArrayBuffer. The test's TypeScript modules are served as JavaScript (esbuild's transform).
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The headers that make a page cross-origin isolated (and let it load these files). */
export const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
} as const;

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>weft in the browser</title><link rel="icon" href="data:,">
<script type="module" src="/test/browser/page.js"></script></head>
<body>weft browser test</body></html>`;

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.map': 'application/json', '.html': 'text/html' };

/** The body and type of `path`, or undefined: only the bundles and this folder are served. */
async function load(path: string): Promise<{ body: string | Buffer; type: string } | undefined> {
  if (path === '/') return { body: PAGE, type: TYPES['.html']! };
  if (!/^\/(dist\/browser|test\/browser)\/[\w.-]+$/.test(path)) return undefined;
  const file = root + path.slice(1);
  const type = TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
  const body = await readFile(file).catch(() => undefined);
  if (body !== undefined) return { body, type };
  // A test module written in TypeScript, asked for by its .js name (as its imports say).
  if (!path.startsWith('/test/') || !path.endsWith('.js')) return undefined;
  const source = await readFile(file.replace(/\.js$/, '.ts'), 'utf8').catch(() => undefined);
  if (source === undefined) return undefined;
  const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'es2022', sourcefile: path });
  return { body: code, type: TYPES['.js']! };
}

export interface TestServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function serve(): Promise<TestServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    load(path).then(
      (found) => {
        res.writeHead(found ? 200 : 404, { ...ISOLATION, 'Content-Type': found?.type ?? 'text/plain', 'Cache-Control': 'no-store' });
        res.end(found?.body ?? `not found: ${path}`);
      },
      (e: unknown) => {
        res.writeHead(500, { ...ISOLATION, 'Content-Type': 'text/plain' });
        res.end(String(e));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
