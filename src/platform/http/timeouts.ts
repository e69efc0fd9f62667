import type { Server } from 'node:http';
import type { FastifyHttpOptions } from 'fastify';

/** How long the server waits on a client, in milliseconds. */
export interface HttpTimeouts {
  /** The whole request, headers and body, must have arrived within this (then 408). */
  readonly requestMs: number;
  /** The request line and headers must have arrived within this (then 408); at most `requestMs`. */
  readonly headersMs: number;
  /**
   * A connection with no traffic at all for this long while a request is open is closed. Longer than any
   * wait of a handler (an upstream call with its retries, another instance's fetch).
   */
  readonly connectionMs: number;
  /** A kept-alive connection with no request for this long is closed. */
  readonly keepAliveMs: number;
}

/**
 * Node looks for requests past their time on a timer, every 30 s by default, so a 10 s limit could hold for
 * 40 s. It looks this many times within the shortest limit instead, and at least once a second.
 */
const CHECKS_PER_LIMIT = 4;
const LONGEST_CHECK_INTERVAL_MS = 1000;

/** Fastify's (and its Node server's) options for these timeouts. */
export function timeoutOptions(timeouts: HttpTimeouts): FastifyHttpOptions<Server> {
  return {
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.connectionMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      requestTimeout: timeouts.requestMs,
      headersTimeout: timeouts.headersMs,
      connectionsCheckingInterval: Math.min(
        LONGEST_CHECK_INTERVAL_MS,
        Math.ceil(timeouts.headersMs / CHECKS_PER_LIMIT),
      ),
    },
  };
}
