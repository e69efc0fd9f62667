/**
 * Why an upstream could not give an answer. Each kind maps to one status of the result shape:
 * throttled 429, timeout 504, unavailable 503, bad_gateway 502.
 */
export type UpstreamFailureKind = 'throttled' | 'timeout' | 'unavailable' | 'bad_gateway';

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    /** Safe to show a client. */
    readonly publicCause: string,
    /** When to try again, for `throttled` and `unavailable`. */
    readonly retryAfterSeconds?: number,
    /** A transient fault of one attempt (network, timeout, 5xx) that another attempt may not meet. */
    readonly retryable = false,
  ) {
    super(publicCause);
    this.name = 'UpstreamFailure';
  }
}

export const FAILURE_STATUS: Record<UpstreamFailureKind, number> = {
  throttled: 429,
  timeout: 504,
  unavailable: 503,
  bad_gateway: 502,
};
