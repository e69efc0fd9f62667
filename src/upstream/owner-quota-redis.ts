import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../platform/logger.js';
import { redisOutageLog } from '../platform/redis.js';
import { createMemoryQuota, type OwnerQuota, type QuotaOptions, quotaStatus } from './owner-quota.js';

/*
 * The owner quota shared by every instance through Redis: one counter per owner that expires with its
 * window, sized from the key's limit in the shared Hypixel budget hash (budget-redis.ts). Each step is one
 * Lua script, atomic in Redis: a charge cannot slip past the limit between reading and counting. The rules
 * are those of owner-quota.ts.
 */

/** The owner's share of the key's limit, or nil while the limit is unknown. KEYS[2] is the budget hash. */
const LIMIT = `local keyLimit = tonumber(redis.call('HGET', KEYS[2], 'limit') or '')
local limit = keyLimit and math.max(1, math.floor(keyLimit * tonumber(ARGV[1]) / 100)) or nil
local windowMs = tonumber(ARGV[2])`;

/** Returns {1} allowed, or {0, limit, used, ms to reset} refused. A counter without expiry starts anew. */
const TAKE = `${LIMIT}
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  redis.call('SET', KEYS[1], 1, 'PX', windowMs)
  return {1}
end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if limit and used >= limit then return {0, limit, used, ttl} end
redis.call('INCR', KEYS[1])
return {1}`;

const RELEASE = `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 1`;

/** Returns {} while the key's limit is unknown, else {limit, used, ms to reset}. */
const STATUS = `${LIMIT}
if not limit then return {} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return {limit, 0, windowMs} end
return {limit, tonumber(redis.call('GET', KEYS[1]) or '0'), ttl}`;

/**
 * How long an owner's standing read from Redis is reused for their RateLimit headers: a cache hit costs no
 * upstream call, and its headers need not cost a Redis round trip either. Another instance's charges show
 * within this time; this instance's own at once.
 */
const STANDING_REUSED_MS = 1000;
/** Owners whose standing is kept at once (the most active ones). */
const STANDINGS_KEPT = 10_000;

/**
 * A quota under `keyPrefix<owner>` shared by every instance using this Redis, sized from the budget hash
 * `budgetKey`. While Redis cannot be reached, each instance keeps its own in-process quota instead.
 */
export function createRedisQuota(
  redis: Redis,
  { keyPrefix, budgetKey }: { keyPrefix: string; budgetKey: string },
  options: QuotaOptions,
  keyLimit: () => Promise<number | undefined>,
  log: Logger,
  now: () => number = Date.now,
): OwnerQuota {
  const local = createMemoryQuota(options, keyLimit, now);
  const standings = new LRUCache<bigint, { limit: number; used: number; endsAt: number; readAt: number }>({
    max: STANDINGS_KEPT,
  });
  const run = async (script: string, owner: bigint) =>
    (await redis.eval(
      script,
      2,
      `${keyPrefix}${owner}`,
      budgetKey,
      options.sharePercent,
      options.windowMs,
    )) as number[];
  const { failed: fallBack, answered } = redisOutageLog(
    log,
    "redis quota unavailable; using this instance's own owner quotas",
    'redis quota available again',
  );

  return {
    async take(owner) {
      try {
        const [allowed, limit = 0, used = 0, resetMs = 0] = await run(TAKE, owner);
        answered();
        standings.delete(owner);
        if (allowed === 1) return { allowed: true };
        return { allowed: false, status: quotaStatus(limit, used, resetMs, options.windowMs) };
      } catch (error) {
        fallBack(error);
        return local.take(owner);
      }
    },
    async settle(owner, sent) {
      if (sent) return;
      standings.delete(owner);
      await redis.eval(RELEASE, 1, `${keyPrefix}${owner}`).then(() => undefined, fallBack);
    },
    async status(owner) {
      const kept = standings.get(owner);
      const at = now();
      if (kept && at - kept.readAt < STANDING_REUSED_MS) {
        return quotaStatus(kept.limit, kept.used, kept.endsAt - at, options.windowMs);
      }
      try {
        const [limit, used = 0, resetMs = 0] = await run(STATUS, owner);
        answered();
        if (limit === undefined) return undefined;
        standings.set(owner, { limit, used, endsAt: at + resetMs, readAt: at });
        return quotaStatus(limit, used, resetMs, options.windowMs);
      } catch (error) {
        fallBack(error);
        return local.status(owner);
      }
    },
  };
}
