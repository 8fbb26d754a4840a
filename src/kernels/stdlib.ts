// @stdlib/math's special functions that weft's kernels call, each loaded on its first call. They
// are some 430 small CommonJS modules: imported up front, they cost every process and worker
// thread that imports weft 120-220 ms, though most never call one. The browser build bundles
// them instead (stdlib.browser.ts: a browser cannot load a module synchronously).
import { createRequire } from 'node:module';
import type Betainc from '@stdlib/math-base-special-betainc';
import type Polygamma from '@stdlib/math-base-special-polygamma';

const load = createRequire(import.meta.url);

type Unary = (x: number) => number;

function unary(name: string): Unary {
  let f: Unary | undefined;
  return (x) => (f ??= load(name) as Unary)(x);
}

export const betainc: typeof Betainc = (() => {
  let f: typeof Betainc | undefined;
  return (x: number, a: number, b: number) => (f ??= load('@stdlib/math-base-special-betainc') as typeof Betainc)(x, a, b);
})();
export const betaln = (() => {
  let f: ((a: number, b: number) => number) | undefined;
  return (a: number, b: number): number => (f ??= load('@stdlib/math-base-special-betaln') as (a: number, b: number) => number)(a, b);
})();
export const polygamma: typeof Polygamma = (() => {
  let f: typeof Polygamma | undefined;
  return (n: number, x: number) => (f ??= load('@stdlib/math-base-special-polygamma') as typeof Polygamma)(n, x);
})();
export const besselj0 = unary('@stdlib/math-base-special-besselj0');
export const besselj1 = unary('@stdlib/math-base-special-besselj1');
export const digamma = unary('@stdlib/math-base-special-digamma');
export const erfcinv = unary('@stdlib/math-base-special-erfcinv');
export const erfcx = unary('@stdlib/math-base-special-erfcx');
export const erfinv = unary('@stdlib/math-base-special-erfinv');
export const gamma = unary('@stdlib/math-base-special-gamma');
export const gammaln = unary('@stdlib/math-base-special-gammaln');
