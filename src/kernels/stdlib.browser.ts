// The browser build's stdlib.ts: the same @stdlib/math functions, imported up front (esbuild
// bundles them; a browser cannot load a module synchronously on a function's first call).
export { default as betainc } from '@stdlib/math-base-special-betainc';
export { default as betaln } from '@stdlib/math-base-special-betaln';
export { default as polygamma } from '@stdlib/math-base-special-polygamma';
export { default as besselj0 } from '@stdlib/math-base-special-besselj0';
export { default as besselj1 } from '@stdlib/math-base-special-besselj1';
export { default as digamma } from '@stdlib/math-base-special-digamma';
export { default as erfcinv } from '@stdlib/math-base-special-erfcinv';
export { default as erfcx } from '@stdlib/math-base-special-erfcx';
export { default as erfinv } from '@stdlib/math-base-special-erfinv';
export { default as gamma } from '@stdlib/math-base-special-gamma';
export { default as gammaln } from '@stdlib/math-base-special-gammaln';
