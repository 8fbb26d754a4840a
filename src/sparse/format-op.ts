// The base of the ops whose one prop is a format (asSparse's, CSM's, toFormat's), and their
// instances per format. Its own module, importing no op module: op classes extend it while the
// sparse modules, which import each other, are still being evaluated.
import { Op } from '../graph/op.js';
import { propKinds } from '../graph/prop-kinds.js';
import type { Variable } from '../graph/variable.js';
import { lazy } from '../tensor/core/op.js';
import { SPARSE_FORMATS, type SparseFormat } from './value.js';

/** An op whose one prop is a format (asSparse's, CSM's, toFormat's): checked, written in documents. */
export abstract class FormatOp extends Op<Variable> {
  static override readonly props: readonly string[] = ['format'];
  static override readonly propKinds = { format: propKinds.oneOf(SPARSE_FORMATS) };

  constructor(readonly format: SparseFormat) {
    super();
    if (!SPARSE_FORMATS.includes(format)) throw new TypeError(`${this.constructor.name}: format must be "csr" or "csc", got ${JSON.stringify(format)}`);
  }
}

/** One lazily made instance of a FormatOp class per format. */
export function perFormat<O>(make: (format: SparseFormat) => O): Readonly<Record<SparseFormat, () => O>> {
  return { csr: lazy(() => make('csr')), csc: lazy(() => make('csc')) };
}
