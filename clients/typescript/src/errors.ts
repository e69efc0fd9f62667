import type { components } from './schema.js';

/** Every error answer of the service but the player lookups' (`GET /player/...`, profiles). */
export type ErrorResponse = components['schemas']['ErrorResponse'];

/** The body a player or profiles lookup answers a failure with (404, 429, 502, 503, 504). */
export interface LookupFailure {
  readonly success: false;
  readonly cause: string;
  readonly throttle: boolean;
  readonly player?: null;
  readonly profiles?: null;
}

const isErrorResponse = (body: unknown): body is ErrorResponse =>
  typeof body === 'object' &&
  body !== null &&
  (body as { success?: unknown }).success === false &&
  Array.isArray((body as { extra?: unknown }).extra);

const isLookupFailure = (body: unknown): body is LookupFailure =>
  typeof body === 'object' &&
  body !== null &&
  (body as { success?: unknown }).success === false &&
  typeof (body as { cause?: unknown }).cause === 'string' &&
  typeof (body as { throttle?: unknown }).throttle === 'boolean';

/**
 * An answer that was not a success. `error` is the ErrorResponse when the service answered one, with `names`
 * its problems' catalogue names (`TOKEN_EXPIRED`, `WORK_BUDGET_EXHAUSTED`, ...); `lookup` the player
 * lookups' failure shape when it answered that instead; `body` what it answered, parsed (or the text).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly error: ErrorResponse | undefined;
  readonly lookup: LookupFailure | undefined;
  readonly body: unknown;
  /** The catalogue names of the ErrorResponse's problems ([] for another body). */
  readonly names: readonly string[];
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;
  /** The service's `X-Request-Id` of the answer, to quote to its operator. */
  readonly requestId: string | undefined;

  constructor(
    status: number,
    body: unknown,
    details: { retryAfterSeconds?: number | undefined; requestId?: string | undefined } = {},
  ) {
    const error = isErrorResponse(body) ? body : undefined;
    const lookup = !error && isLookupFailure(body) ? body : undefined;
    super(
      `${status}: ${error?.cause ?? lookup?.cause ?? (typeof body === 'string' ? body.slice(0, 200) : 'error')}` +
        (error && error.extra.length > 0
          ? ` (${error.extra.map((problem) => problem.name).join(', ')})`
          : ''),
    );
    this.status = status;
    this.error = error;
    this.lookup = lookup;
    this.body = body;
    this.names = error ? error.extra.map((problem) => problem.name) : [];
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.requestId = details.requestId;
  }

  /** Whether one of the problems is this catalogue name. */
  is(name: string): boolean {
    return this.names.includes(name);
  }
}
