import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { UpstreamConfig } from '../config.js';
import { type BudgetOptions, createMemoryBudget, type RateBudget } from './budget.js';
import { createRedisBudget } from './budget-redis.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { createUpstreamClient } from './http.js';
import { createHypixelClient, type HypixelClient } from './hypixel.js';
import { createMojangClient, type MojangClient } from './mojang.js';
import type { UpstreamMetrics } from './upstream-metrics.js';

export interface Upstreams {
  readonly hypixel: HypixelClient;
  readonly mojang: MojangClient;
  close(): Promise<void>;
}

/** Time a request may keep its budget ticket beyond its own timeout before the ticket lapses. */
const TICKET_SLACK_MS = 1000;

/**
 * Both upstream clients, each with its own pool, circuit breaker and rate budget. With Redis the budgets
 * are shared by every instance (one key, one budget); otherwise they are in-process.
 */
export function createUpstreams(
  config: UpstreamConfig,
  {
    redis,
    keyPrefix,
    metrics,
    log,
  }: { redis: Redis | undefined; keyPrefix: string; metrics: UpstreamMetrics; log: FastifyBaseLogger },
): Upstreams {
  const holdMs = config.timeoutMs + TICKET_SLACK_MS;
  const budget = (name: string, options: BudgetOptions): RateBudget =>
    redis
      ? createRedisBudget(redis, `${keyPrefix}budget:${name}`, options, log)
      : createMemoryBudget(options);
  const client = (name: string, baseUrl: string, rateBudget: RateBudget) =>
    createUpstreamClient({
      name,
      baseUrl,
      connectTimeoutMs: config.connectTimeoutMs,
      timeoutMs: config.timeoutMs,
      retries: config.retries,
      retryBaseMs: config.retryBaseMs,
      connections: config.connections,
      breaker: createCircuitBreaker(config.breakerFailures, config.breakerCooldownMs),
      budget: rateBudget,
      metrics,
    });
  const hypixelHttp = client(
    'hypixel',
    config.hypixelUrl,
    budget('hypixel', { windowMs: config.hypixelRateWindowMs, holdMs }),
  );
  const mojangHttp = client(
    'mojang',
    config.mojangUrl,
    budget('mojang', {
      limit: config.mojangRateLimit.limit,
      windowMs: config.mojangRateLimit.windowMs,
      holdMs,
    }),
  );
  return {
    hypixel: createHypixelClient(hypixelHttp, config.hypixelApiKey),
    mojang: createMojangClient(mojangHttp),
    close: async () => {
      await Promise.all([hypixelHttp.close(), mojangHttp.close()]);
    },
  };
}
