import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, errors, Pool } from 'undici';
import type { Logger } from '../platform/logger.js';
import type { RateBudget } from './budget.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { OwnerQuota } from './owner-quota.js';
import { CallerQuotaExceeded, UpstreamFailure } from './upstream-failure.js';
import type { UpstreamMetrics, UpstreamOutcome } from './upstream-metrics.js';

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface UpstreamClientOptions {
  readonly name: string;
  readonly baseUrl: string;
  readonly connectTimeoutMs: number;
  readonly timeoutMs: number;
  /**
   * The longest one request may take, all its attempts and the pauses between them together: an attempt
   * gets what is left (at most `timeoutMs`), and none starts once it has passed.
   */
  readonly deadlineMs?: number;
  readonly retries: number;
  readonly retryBaseMs: number;
  readonly connections: number;
  /** The most bytes an answer's body may have: a longer one is refused as it arrives (`bad_response`). */
  readonly maxBodyBytes: number;
  readonly breaker: CircuitBreaker;
  readonly budget: RateBudget;
  /** Each owner's share of the key, charged once per request made for an owner. */
  readonly quota: OwnerQuota;
  readonly metrics: UpstreamMetrics;
  readonly log: Logger;
}

export interface GetOptions {
  /** The endpoint's label in metrics and logs. */
  readonly endpoint: string;
  readonly headers?: Record<string, string>;
  /** Whose lookup this is: charged to their quota. Calls the service makes for itself name nobody. */
  readonly owner?: bigint;
}

export interface UpstreamClient {
  /**
   * GETs `path` and reads the answer with `read`, which returns the value or throws an UpstreamFailure.
   * A 5xx, a network error or a timeout is retried; what `read` refuses in a 2xx answer (not JSON, the
   * wrong shape) counts as a failure of the upstream, like a 5xx, but is not retried.
   */
  get<T>(path: string, options: GetOptions, read: (response: UpstreamResponse) => T): Promise<T>;
  close(): Promise<void>;
}

/** Outcomes that count against the upstream for the circuit breaker. */
const FAILED: ReadonlySet<UpstreamOutcome> = new Set([
  'timeout',
  'network_error',
  'server_error',
  'bad_response',
]);

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const isTimeout = (error: unknown) =>
  (error instanceof Error && error.name === 'TimeoutError') ||
  (error instanceof errors.UndiciError &&
    TIMEOUT_CODES.has((error as errors.UndiciError & { code: string }).code));

const header = (headers: UpstreamResponse['headers'], name: string): number | undefined => {
  const value = Number([headers[name]].flat()[0]);
  return Number.isFinite(value) ? value : undefined;
};

/** `RateLimit-Reset`, or `Retry-After` in seconds, when the upstream sent either. */
/** How long to hold off after a 429 that does not say: the budget pauses so long, and the answer says so. */
export const THROTTLED_PAUSE_SECONDS = 60;

export const resetSecondsOf = (headers: UpstreamResponse['headers']) =>
  header(headers, 'ratelimit-reset') ?? header(headers, 'retry-after');

/** The metrics outcome of an answer `read` accepted, or refused (`refused`), by its status. */
function outcomeOf(status: number, refused: unknown): UpstreamOutcome {
  if (status === 429) return 'throttled';
  if (status === 404) return 'not_found';
  if (status >= 400) return 'client_error';
  return refused ? 'bad_response' : 'ok';
}

/** As undici's `text()` decodes: UTF-8, a byte-order mark dropped, what is not UTF-8 replaced. */
const utf8 = new TextDecoder();

/** An answer's body longer than the client takes. */
class BodyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the answer's body is longer than ${maxBytes} bytes`);
  }
}

/**
 * The body as UTF-8 text, refused (`BodyTooLarge`, the rest left unread and the connection dropped) once it
 * says or shows it is longer than `maxBytes`: an upstream answering without end cannot fill the memory,
 * nor hold the event loop parsing it.
 */
async function textWithin(
  { body, headers }: Pick<Dispatcher.ResponseData, 'body' | 'headers'>,
  maxBytes: number,
): Promise<string> {
  const declared = Number([headers['content-length']].flat()[0] ?? Number.NaN);
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    if (declared > maxBytes) throw new BodyTooLarge(maxBytes);
    for await (const chunk of body as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > maxBytes) throw new BodyTooLarge(maxBytes);
      chunks.push(chunk);
    }
  } catch (error) {
    body.destroy();
    throw error;
  }
  return utf8.decode(Buffer.concat(chunks, length));
}

/** The least time left worth starting another attempt with (within a request's deadline). */
const MIN_ATTEMPT_MS = 250;

/**
 * A pooled keep-alive client for one upstream. A request passes the circuit breaker, is charged to its
 * owner's quota, and each of its attempts takes from the key's rate budget; network errors, timeouts and
 * 5xx are retried with jittered exponential backoff (full jitter), 4xx never. The breaker hears once per
 * request how it ended, and a failed request is logged once, at warn, with its cause.
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const url = new URL(options.baseUrl);
  const basePath = url.pathname.replace(/\/+$/, '');
  const pool = new Pool(url.origin, {
    connections: options.connections,
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 30_000,
  });
  const { name, breaker, budget, quota, metrics, log } = options;
  metrics.watchBudget(name, () => budget.remaining());
  // Whether the budget refused the last take: its running out, and its coming back, are logged once each.
  let budgetUsedUp = false;
  const budgetWas = (usedUp: boolean, retryAfterMs = 0) => {
    if (usedUp === budgetUsedUp) return;
    budgetUsedUp = usedUp;
    if (!usedUp) log.info({ upstream: name }, 'upstream budget available again');
    else
      log.warn(
        { upstream: name, retryAfterSeconds: Math.ceil(retryAfterMs / 1000) },
        'upstream budget used up; uncached lookups are refused until it resets',
      );
  };

  /** One attempt: the outcome it met is reported through `met` as soon as the upstream has answered. */
  async function attempt<T>(
    path: string,
    { endpoint, headers = {} }: GetOptions,
    read: (response: UpstreamResponse) => T,
    met: (outcome: UpstreamOutcome) => void,
    timeoutMs: number,
  ): Promise<T> {
    const grant = await budget.take();
    if (!grant.granted) {
      metrics.called(name, endpoint, 'budget_denied');
      budgetWas(true, grant.retryAfterMs);
      throw new UpstreamFailure(
        'throttled',
        `the ${name} rate limit is used up`,
        Math.ceil(grant.retryAfterMs / 1000),
      );
    }
    budgetWas(false);
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    let response: UpstreamResponse;
    try {
      const answer = await pool.request({
        path: `${basePath}${path}`,
        method: 'GET',
        headers,
        signal: AbortSignal.timeout(timeoutMs),
      });
      response = {
        status: answer.statusCode,
        headers: answer.headers,
        body: await textWithin(answer, options.maxBodyBytes),
      };
    } catch (error) {
      await budget.settle(grant.ticket, {});
      if (error instanceof BodyTooLarge) {
        met('bad_response');
        metrics.called(name, endpoint, 'bad_response', seconds());
        throw new UpstreamFailure('bad_gateway', `${name} answered with more than ${error.maxBytes} bytes`);
      }
      const timedOut = isTimeout(error);
      met(timedOut ? 'timeout' : 'network_error');
      metrics.called(name, endpoint, timedOut ? 'timeout' : 'network_error', seconds());
      throw timedOut
        ? new UpstreamFailure('timeout', `${name} did not answer in time`, undefined, true)
        : new UpstreamFailure('unavailable', `${name} cannot be reached`, 1, true);
    }
    const throttled = response.status === 429;
    await budget.settle(grant.ticket, {
      limit: header(response.headers, 'ratelimit-limit'),
      remaining: header(response.headers, 'ratelimit-remaining'),
      // A 429 that says not when: the same pause the failure tells the client (not the whole window).
      resetSeconds: resetSecondsOf(response.headers) ?? (throttled ? THROTTLED_PAUSE_SECONDS : undefined),
      throttled,
    });
    if (response.status >= 500) {
      met('server_error');
      metrics.called(name, endpoint, 'server_error', seconds());
      throw new UpstreamFailure(
        'bad_gateway',
        `${name} answered with an error (${response.status})`,
        undefined,
        true,
      );
    }
    let refused: unknown;
    try {
      return read(response);
    } catch (error) {
      refused = error;
      throw error;
    } finally {
      const outcome = outcomeOf(response.status, refused);
      met(outcome);
      metrics.called(name, endpoint, outcome, seconds());
    }
  }

  /** Charges `owner`'s quota, or throws their own 429 (the key may have budget left for others). */
  async function charge(owner: bigint, endpoint: string): Promise<void> {
    const taken = await quota.take(owner);
    if (taken.allowed) return;
    metrics.called(name, endpoint, 'quota_denied');
    const { limit, windowSeconds, resetSeconds } = taken.status;
    throw new CallerQuotaExceeded(limit, windowSeconds, resetSeconds);
  }

  /**
   * The attempts of one request, retried as the rules say; the breaker and the log hear how it ended, and
   * `sent` is called once something reached the upstream.
   */
  async function send<T>(
    path: string,
    getOptions: GetOptions,
    read: (response: UpstreamResponse) => T,
    sent: () => void,
  ): Promise<T> {
    // The last outcome the upstream gave; none while nothing was sent.
    let outcome: UpstreamOutcome | undefined;
    let attempts = 0;
    const met = (latest: UpstreamOutcome) => {
      outcome = latest;
      attempts += 1;
      sent();
    };
    const deadline = performance.now() + (options.deadlineMs ?? Number.POSITIVE_INFINITY);
    const left = () => deadline - performance.now();
    for (let retry = 0; ; retry++) {
      try {
        // Whole milliseconds (AbortSignal.timeout takes no fraction), at least one.
        const timeoutMs = Math.max(1, Math.floor(Math.min(options.timeoutMs, left())));
        const value = await attempt(path, getOptions, read, met, timeoutMs);
        breaker.succeeded();
        return value;
      } catch (error) {
        const pause = Math.random() * options.retryBaseMs * 2 ** retry;
        // Another attempt only if it would still have a useful share of the deadline after its pause.
        const again =
          error instanceof UpstreamFailure &&
          error.retryable &&
          retry < options.retries &&
          left() - pause >= Math.min(options.timeoutMs, MIN_ATTEMPT_MS);
        if (again) {
          await sleep(pause);
          continue;
        }
        if (outcome === undefined) {
          // Nothing went out (the key's budget refused it): the breaker learnt nothing.
          breaker.abandoned();
          throw error;
        }
        if (FAILED.has(outcome)) breaker.failed();
        else breaker.succeeded();
        const { endpoint, owner } = getOptions;
        log.warn(
          {
            upstream: name,
            endpoint,
            outcome,
            attempts,
            // In the log as the token's subject is written: decimal text.
            owner: owner?.toString(),
            cause: (error as Error).message,
          },
          'upstream request failed',
        );
        throw error;
      }
    }
  }

  return {
    async get(path, getOptions, read) {
      const { endpoint, owner } = getOptions;
      const admitted = breaker.admit();
      if (!admitted.allowed) {
        metrics.called(name, endpoint, 'circuit_open');
        throw new UpstreamFailure(
          'unavailable',
          `${name} is failing; calls are paused`,
          Math.ceil(admitted.retryAfterMs / 1000),
        );
      }
      if (owner !== undefined) {
        try {
          await charge(owner, endpoint);
        } catch (error) {
          breaker.abandoned();
          throw error;
        }
      }
      let sent = false;
      try {
        return await send(path, getOptions, read, () => {
          sent = true;
        });
      } finally {
        // A lookup that sent nothing gives its charge back.
        if (owner !== undefined) await quota.settle(owner, sent);
      }
    },
    close: () => pool.close(),
  };
}
