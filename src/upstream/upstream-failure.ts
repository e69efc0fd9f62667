import type { FailureRules } from '../platform/cache/cached-resource.js';
import { type ErrorKind, ErrorKinds } from '../platform/errors.js';

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

/**
 * A lookup refused because its caller used up their own share of the key (owner-quota.ts), while the key
 * itself may have budget left: the caller's failure, not the upstream's. Nobody else waiting on the same
 * fetch gets it; they fetch for themselves.
 */
export class CallerQuotaExceeded extends UpstreamFailure {
  constructor(limit: number, windowSeconds: number, retryAfterSeconds: number) {
    super(
      'throttled',
      `your share of the upstream budget is used up (${limit} uncached lookups per ${windowSeconds} s per ` +
        'owner); cached players are still served; retry after Retry-After',
      retryAfterSeconds,
    );
    this.name = 'CallerQuotaExceeded';
  }
}

/** Each kind of upstream failure as an error of the catalogue, whose status its answers take. */
const FAILURE_KINDS: Record<UpstreamFailureKind, ErrorKind> = {
  throttled: ErrorKinds.UPSTREAM_THROTTLED,
  timeout: ErrorKinds.UPSTREAM_TIMEOUT,
  unavailable: ErrorKinds.UPSTREAM_UNAVAILABLE,
  bad_gateway: ErrorKinds.UPSTREAM_BAD_GATEWAY,
};

/**
 * An upstream failure as the lookups' answers report it (`failureOf` of `platform/http/lookup-result.ts`,
 * which knows no upstream): its catalogue kind, its cause, whether the upstream is throttling, and when to try
 * again; undefined for any other error.
 */
export function upstreamFailureOf(error: unknown):
  | {
      readonly kind: ErrorKind;
      readonly cause: string;
      readonly throttle: boolean;
      readonly retryAfterSeconds: number | undefined;
    }
  | undefined {
  if (!(error instanceof UpstreamFailure)) return undefined;
  return {
    kind: FAILURE_KINDS[error.kind],
    cause: error.publicCause,
    throttle: error.kind === 'throttled',
    retryAfterSeconds: error.retryAfterSeconds,
  };
}

/**
 * Upstream failures as the cache sees them: a stale copy may stand in for one, and an instance that
 * fetched for others shares its failure with them (its kind, cause and retry time, nothing else), except a
 * caller's own quota failure.
 */
export const upstreamFailureRules: FailureRules = {
  canServeStale: (error) => error instanceof UpstreamFailure,
  isCallersOwn: (error) => error instanceof CallerQuotaExceeded,
  encode(error) {
    if (!(error instanceof UpstreamFailure) || error instanceof CallerQuotaExceeded) return undefined;
    const { kind, publicCause, retryAfterSeconds } = error;
    return Buffer.from(JSON.stringify({ kind, publicCause, retryAfterSeconds }));
  },
  decode(bytes) {
    const { kind, publicCause, retryAfterSeconds } = JSON.parse(bytes.toString('utf8')) as {
      kind: UpstreamFailureKind;
      publicCause: string;
      retryAfterSeconds?: number;
    };
    return new UpstreamFailure(kind, publicCause, retryAfterSeconds);
  },
  waitTimedOut: () => new UpstreamFailure('timeout', 'the upstream answer did not arrive in time'),
};
