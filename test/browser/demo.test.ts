// The browser demo page (npm run demo:browser) in headless Chromium: it trains the MLP on two Web
// Workers, its loss curve falls and the last call's timeline is drawn; a screenshot of the page
// goes to .tap/screenshots/demo-browser.png (the picture a person looks at). The SVG pictures of
// docs/img open in the same browser (drawn at their size; screenshots beside it).
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import t from 'tap';
import { serveDemo } from '../../scripts/demo-browser.js';
import type { IsolatedServer } from '../../scripts/isolated-server.js';
import { CHROMIUM as CHROMIUM_PROGRAM, requires } from '../requires.js';

const CHROMIUM = requires(t, CHROMIUM_PROGRAM, 'the browser demo page in headless Chromium');
const root = fileURLToPath(new URL('../..', import.meta.url));
const shots = `${root}.tap/screenshots/`;

if (CHROMIUM !== undefined) {
  let server: IsolatedServer;
  let browser: Browser;
  t.before(async () => {
    mkdirSync(shots, { recursive: true });
    server = await serveDemo();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  t.teardown(async () => {
    await browser?.close();
    await server?.close();
  });

  t.test('the demo trains on Web Workers: the loss falls, the timeline is drawn; a screenshot is saved', async (t) => {
    const page = await browser.newPage({ viewport: { width: 1040, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/?steps=40`);
    await page.waitForFunction('globalThis.weftDemo?.done === true || globalThis.weftDemo?.error !== undefined', undefined, { timeout: 120_000 });
    const state = (await page.evaluate('globalThis.weftDemo')) as { steps: number; losses: number[]; error?: string; workers: number };
    t.equal(state.error, undefined, 'no error');
    t.same(errors, [], 'no page errors');
    t.equal(state.steps, 40, '40 steps');
    t.equal(state.workers, 2, 'on two Web Workers');
    const [first, last] = [state.losses[0]!, state.losses[state.losses.length - 1]!];
    t.ok(last < 0.5 * first, `the loss fell: ${first.toFixed(4)} -> ${last.toFixed(4)}`);
    const points = await page.evaluate("document.querySelector('#loss polyline').getAttribute('points').trim().split(/\\s+/).length");
    t.equal(points, 40, 'the curve has a point per step');
    const lanes = await page.evaluate("document.querySelectorAll('#timeline svg g.lane').length");
    t.ok((lanes as number) >= 1, `the timeline has lanes (${lanes})`);
    const bars = await page.evaluate("document.querySelectorAll('#timeline svg rect.task').length");
    t.ok((bars as number) >= 1, `and task bars (${bars})`);
    await page.screenshot({ path: `${shots}demo-browser.png`, fullPage: true });
    t.pass(`screenshot: ${shots}demo-browser.png`);
    await page.close();
  });

  t.test('the SVG pictures in docs/img open in Chromium', async (t) => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    for (const name of ['graph', 'timeline', 'bench-w1']) {
      const svg = readFileSync(`${root}docs/img/${name}.svg`);
      await page.setContent(`<img id="p" src="data:image/svg+xml;base64,${svg.toString('base64')}">`);
      await page.waitForFunction("document.getElementById('p').complete");
      const size = (await page.evaluate("(() => { const p = document.getElementById('p'); return [p.naturalWidth, p.naturalHeight]; })()")) as [number, number];
      t.ok(size[0] > 100 && size[1] > 50, `${name}.svg is drawn at ${size[0]} x ${size[1]}`);
      await page.screenshot({ path: `${shots}${name}.png`, fullPage: true });
    }
    await page.close();
  });
}
