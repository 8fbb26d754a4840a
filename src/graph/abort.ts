// The error of a call or run that an AbortSignal stopped: one class for every executor (the
// reference executor here, plans in the scheduler), exported as weft.AbortError.

export class AbortError extends Error {
  /** `options.cause`: the AbortSignal's reason, when a signal stopped the call. */
  constructor(message = 'the call was aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

/** The AbortError of a call that `signal` stopped, carrying the signal's reason. */
export function abortedBy(signal: AbortSignal | undefined, message = 'the call was aborted'): AbortError {
  return new AbortError(message, signal?.aborted ? { cause: signal.reason } : undefined);
}
