// A small web server for weft in browsers (node:http on 127.0.0.1): every answer is cross-origin
// isolated (COOP same-origin, COEP require-corp), so pages get SharedArrayBuffer; TypeScript
// modules asked for by their .js name are served as JavaScript (esbuild's transform). The browser
// test (test/browser/server.ts) and the demo page (scripts/demo-browser.ts) say what they serve.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { transform } from 'esbuild';

/** The headers that make a page cross-origin isolated (and let it load these files). */
export const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
} as const;

export const TYPES: Readonly<Record<string, string>> = { '.js': 'text/javascript', '.map': 'application/json', '.html': 'text/html', '.svg': 'image/svg+xml' };

export interface Served {
  readonly body: string | Buffer;
  readonly type: string;
}

/** `file` as it is, or, when it is missing and named .js, the TypeScript beside it as JavaScript. */
export async function fileOrModule(file: string, path: string): Promise<Served | undefined> {
  const type = TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
  const body = await readFile(file).catch(() => undefined);
  if (body !== undefined) return { body, type };
  if (!path.endsWith('.js')) return undefined;
  const source = await readFile(file.replace(/\.js$/, '.ts'), 'utf8').catch(() => undefined);
  if (source === undefined) return undefined;
  const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'es2022', sourcefile: path });
  return { body: code, type: TYPES['.js']! };
}

export interface IsolatedServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves what `load` finds for a path (404 otherwise) on `port` (0: any free one). */
export async function serveIsolated(load: (path: string) => Promise<Served | undefined>, port = 0): Promise<IsolatedServer> {
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
