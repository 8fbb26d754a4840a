// A vector math function written against LogOps, compiled to one plain JS function: the same
// operations in the same order as jsOps performs them (so the same bits as the WebAssembly
// version), as straight-line code with a local per value instead of a closure call per operation.
import { exponentField, POW2, significandOf } from './functions.js';
import type { LogOps } from './logarithms.js';

/** A function of one float, written once for every LogOps. */
export type MathFunctionOf = <F, M>(o: LogOps<F, M>, x: F) => F;

/** A number as JS source that reads back as the same float64 (String round-trips; -0 does not). */
function literal(x: number): string {
  return Object.is(x, -0) ? '-0' : String(x);
}

/** A function of two floats (arctan2's y and x), written once for every LogOps. */
export type BinaryMathFunctionOf = <F, M>(o: LogOps<F, M>, a: F, b: F) => F;

/** `fn` as a JS function of a number; `name` names it in stack traces. */
export function compileToJs(fn: MathFunctionOf, name: string): (x: number) => number {
  return compile((o) => fn(o, 'x'), ['x'], name) as (x: number) => number;
}

/** `fn` as a JS function of two numbers. */
export function compileBinaryToJs(fn: BinaryMathFunctionOf, name: string): (a: number, b: number) => number {
  return compile((o) => fn(o, 'a', 'b'), ['a', 'b'], name) as (a: number, b: number) => number;
}

function compile(body: (o: LogOps<string, string>) => string, params: readonly string[], name: string): (...args: number[]) => number {
  const lines: string[] = [];
  const value = (expr: string): string => {
    const local = `v${lines.length}`;
    lines.push(`const ${local} = ${expr};`);
    return local;
  };
  const ops: LogOps<string, string> = {
    c: literal,
    add: (a, b) => value(`${a} + ${b}`),
    sub: (a, b) => value(`${a} - ${b}`),
    mul: (a, b) => value(`${a} * ${b}`),
    div: (a, b) => value(`${a} / ${b}`),
    min: (a, b) => value(`Math.min(${a}, ${b})`),
    max: (a, b) => value(`Math.max(${a}, ${b})`),
    abs: (a) => value(`Math.abs(${a})`),
    sqrt: (a) => value(`Math.sqrt(${a})`),
    lt: (a, b) => value(`${a} < ${b}`),
    gt: (a, b) => value(`${a} > ${b}`),
    eq: (a, b) => value(`${a} === ${b}`),
    isNaN: (a) => value(`${a} !== ${a}`),
    sel: (m, a, b) => value(`${m} ? ${a} : ${b}`),
    copysign: (a, s) => value(`${s} < 0 || 1 / ${s} < 0 ? -Math.abs(${a}) : Math.abs(${a})`),
    // jsOps.scale: floor(k / 2) is k >> 1 for the integer k in [-1100, 1100].
    scale: (p, k) => value(`${k} !== ${k} ? NaN : ${p} * POW2[(${k} >> 1) + 560] * POW2[${k} - (${k} >> 1) + 560]`),
    exponent: (a) => value(`exponent(${a})`),
    significand: (a) => value(`significand(${a})`),
  };
  const result = body(ops);
  const source = `return function ${name}(${params.join(', ')}) {\n${lines.join('\n')}\nreturn ${result};\n};`;
  return new Function('POW2', 'exponent', 'significand', source)(POW2, exponentField, significandOf) as (...args: number[]) => number;
}
