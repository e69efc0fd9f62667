import type { Redis } from 'ioredis';
import type { Logger } from '../platform/logger.js';
import { type BudgetOptions, createMemoryBudget, type RateBudget } from './budget.js';
import { createRedisBudget } from './budget-redis.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { createUpstreamClient } from './http.js';
import { createHypixelClient, type HypixelClient } from './hypixel.js';
import { createMojangClient, type MojangClient } from './mojang.js';
import { createMemoryQuota, guarded, type OwnerQuota } from './owner-quota.js';
import { createRedisQuota } from './owner-quota-redis.js';
import type { UpstreamMetrics } from './upstream-metrics.js';

export interface UpstreamSettings {
  readonly hypixelApiKey: string | undefined;
  readonly hypixelUrl: string;
  readonly mojangUrl: string;
  /** The window Hypixel's limit is counted over, assumed until its RateLimit-Reset says when it ends. */
  readonly hypixelRateWindowMs: number;
  /** Mojang sends no rate-limit headers: its published limit, kept by the service. */
  readonly mojangRateLimit: { readonly limit: number; readonly windowMs: number };
  readonly connectTimeoutMs: number;
  /** Per attempt, headers and body included. */
  readonly timeoutMs: number;
  /** The longest one lookup may take, all its attempts and their pauses together. */
  readonly deadlineMs: number;
  /** Further attempts after a network error or a 5xx; never after a 4xx. */
  readonly retries: number;
  readonly retryBaseMs: number;
  /** Consecutive failures that open the circuit, and how long it then stays open. */
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
  /** Kept-alive connections per upstream origin. */
  readonly connections: number;
  /** The most bytes an answer's body may have; a longer one is a failure of the upstream (502). */
  readonly maxBodyBytes: number;
  /** The share of the key's budget one owner may spend per window, in percent. */
  readonly ownerSharePercent: number;
}

export interface Upstreams {
  readonly hypixel: HypixelClient;
  readonly mojang: MojangClient;
  /** Each owner's share of the key, charged by both clients; its standing goes into RateLimit headers. */
  readonly quota: Pick<OwnerQuota, 'status'>;
  close(): Promise<void>;
}

/** Time a request may keep its budget ticket beyond its own timeout before the ticket lapses. */
const TICKET_SLACK_MS = 1000;

/**
 * Both upstream clients, each with its own pool, circuit breaker and rate budget; built once per app, so
 * that every module spends one budget per key. With Redis the budgets are shared by every instance (one
 * key, one budget); otherwise they are in-process.
 */
export function createUpstreams(
  config: UpstreamSettings,
  {
    redis,
    keyPrefix,
    metrics,
    log,
    onOwnerCall = () => undefined,
  }: {
    redis: Redis | undefined;
    keyPrefix: string;
    metrics: UpstreamMetrics;
    log: Logger;
    /** Told of each lookup that reached the upstream on an owner's behalf (their usage of the day). */
    onOwnerCall?: (owner: bigint) => void;
  },
): Upstreams {
  const holdMs = config.timeoutMs + TICKET_SLACK_MS;
  const budgetKey = (name: string) => `${keyPrefix}budget:${name}`;
  const budget = (name: string, options: BudgetOptions): RateBudget =>
    redis ? createRedisBudget(redis, budgetKey(name), options, log) : createMemoryBudget(options);
  const hypixelBudget = budget('hypixel', { windowMs: config.hypixelRateWindowMs, holdMs });
  // One count per owner for every upstream call made for them, sized from the key that matters: Hypixel's.
  const quotaOptions = {
    sharePercent: config.ownerSharePercent,
    windowMs: config.hypixelRateWindowMs,
    holdMs,
  };
  const keyLimit = () => hypixelBudget.limit();
  const shares = guarded(
    redis
      ? createRedisQuota(
          redis,
          { keyPrefix: `${keyPrefix}quota:`, budgetKey: budgetKey('hypixel') },
          quotaOptions,
          keyLimit,
          log,
        )
      : createMemoryQuota(quotaOptions, keyLimit),
    { keyLimit, holdMs, log },
  );
  const quota: OwnerQuota = {
    ...shares,
    settle: async (owner, sent) => {
      if (sent) onOwnerCall(owner);
      return shares.settle(owner, sent);
    },
  };
  const breaker = (name: string) =>
    createCircuitBreaker(config.breakerFailures, config.breakerCooldownMs, {
      onChange: (change, failures) =>
        change === 'opened'
          ? log.warn(
              { upstream: name, failures, cooldownSeconds: config.breakerCooldownMs / 1000 },
              'upstream circuit opened: calls paused',
            )
          : log.info({ upstream: name }, 'upstream circuit closed: calls resumed'),
    });
  const client = (name: string, baseUrl: string, rateBudget: RateBudget) =>
    createUpstreamClient({
      name,
      baseUrl,
      connectTimeoutMs: config.connectTimeoutMs,
      timeoutMs: config.timeoutMs,
      deadlineMs: config.deadlineMs,
      retries: config.retries,
      retryBaseMs: config.retryBaseMs,
      connections: config.connections,
      maxBodyBytes: config.maxBodyBytes,
      breaker: breaker(name),
      budget: rateBudget,
      quota,
      metrics,
      log,
    });
  const hypixelHttp = client('hypixel', config.hypixelUrl, hypixelBudget);
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
    quota,
    close: async () => {
      await Promise.all([hypixelHttp.close(), mojangHttp.close()]);
    },
  };
}
