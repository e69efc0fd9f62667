import { setTimeout as sleep } from 'node:timers/promises';
import { errors, Pool } from 'undici';
import type { RateBudget } from './budget.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import { UpstreamFailure } from './upstream-failure.js';
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
  readonly retries: number;
  readonly retryBaseMs: number;
  readonly connections: number;
  readonly breaker: CircuitBreaker;
  readonly budget: RateBudget;
  readonly metrics: UpstreamMetrics;
}

export interface UpstreamClient {
  /** GETs `path`; any HTTP answer below 500 is returned, everything else becomes an UpstreamFailure. */
  get(
    path: string,
    options: { endpoint: string; headers?: Record<string, string> },
  ): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

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
export const resetSecondsOf = (headers: UpstreamResponse['headers']) =>
  header(headers, 'ratelimit-reset') ?? header(headers, 'retry-after');

/**
 * A pooled keep-alive client for one upstream. Each attempt takes from the rate budget and passes the
 * circuit breaker first; network errors, timeouts and 5xx are retried with jittered exponential backoff
 * (full jitter), 4xx never.
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
  const { name, breaker, budget, metrics } = options;
  metrics.watchBudget(name, () => budget.remaining());

  async function attempt(
    path: string,
    endpoint: string,
    headers: Record<string, string>,
  ): Promise<UpstreamResponse> {
    const admitted = breaker.admit();
    if (!admitted.allowed) {
      metrics.called(name, endpoint, 'circuit_open');
      throw new UpstreamFailure(
        'unavailable',
        `${name} is failing; calls are paused`,
        Math.ceil(admitted.retryAfterMs / 1000),
      );
    }
    const grant = await budget.take();
    if (!grant.granted) {
      metrics.called(name, endpoint, 'budget_denied');
      throw new UpstreamFailure(
        'throttled',
        `the ${name} rate limit is used up`,
        Math.ceil(grant.retryAfterMs / 1000),
      );
    }
    const started = performance.now();
    let response: UpstreamResponse;
    try {
      const answer = await pool.request({
        path: `${basePath}${path}`,
        method: 'GET',
        headers,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      response = { status: answer.statusCode, headers: answer.headers, body: await answer.body.text() };
    } catch (error) {
      await budget.settle(grant.ticket, {});
      breaker.failed();
      const timedOut = isTimeout(error);
      metrics.called(
        name,
        endpoint,
        timedOut ? 'timeout' : 'network_error',
        (performance.now() - started) / 1000,
      );
      throw timedOut
        ? new UpstreamFailure('timeout', `${name} did not answer in time`, undefined, true)
        : new UpstreamFailure('unavailable', `${name} cannot be reached`, 1, true);
    }
    const throttled = response.status === 429;
    await budget.settle(grant.ticket, {
      limit: header(response.headers, 'ratelimit-limit'),
      remaining: header(response.headers, 'ratelimit-remaining'),
      resetSeconds: resetSecondsOf(response.headers),
      throttled,
    });
    const outcome: UpstreamOutcome =
      response.status >= 500
        ? 'server_error'
        : throttled
          ? 'throttled'
          : response.status === 404
            ? 'not_found'
            : response.status >= 400
              ? 'client_error'
              : 'ok';
    metrics.called(name, endpoint, outcome, (performance.now() - started) / 1000);
    if (response.status >= 500) {
      breaker.failed();
      throw new UpstreamFailure(
        'bad_gateway',
        `${name} answered with an error (${response.status})`,
        undefined,
        true,
      );
    }
    breaker.succeeded();
    return response;
  }

  return {
    async get(path, { endpoint, headers = {} }) {
      for (let retry = 0; ; retry++) {
        try {
          return await attempt(path, endpoint, headers);
        } catch (error) {
          if (!(error instanceof UpstreamFailure && error.retryable) || retry >= options.retries) throw error;
          await sleep(Math.random() * options.retryBaseMs * 2 ** retry);
        }
      }
    },
    close: () => pool.close(),
  };
}
