import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../platform/logger.js';
import { redisOutageLog } from '../platform/redis.js';
import {
  type BudgetOptions,
  createMemoryBudget,
  type RateBudget,
  type TakeResult,
  takeWithWait,
} from './budget.js';

/*
 * The budget shared by every instance through Redis: one hash (limit, remaining, resetAt) and one sorted
 * set of tickets in flight, scored by when they lapse (so a crashed instance cannot hold a ticket forever).
 * Each step is one Lua script, atomic in Redis, on Redis's clock. The rules are those of budget.ts.
 */

const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/*
 * Both keys lapse once nothing is left to remember: the hash two windows after its last use (or a window
 * after its reset, if that is later: a pause the upstream asked for is kept), after which it would read as
 * a fresh window anyway (the limit is learned again from the next answer); the tickets once the last one
 * lapses. So a budget no instance uses any more leaves nothing behind.
 */
const KEEP = `
local function keep(windowMs, holdMs)
  local keepMs = 2 * windowMs
  local resetAt = redis.call('HGET', KEYS[1], 'resetAt')
  if resetAt then keepMs = math.max(keepMs, tonumber(resetAt) - now + windowMs) end
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], math.floor(keepMs)) end
  if holdMs and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], holdMs) end
end`;

const TAKE = `${NOW}${KEEP}
local windowMs, holdMs, ticket, static = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]
local function take()
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if static ~= '' and redis.call('HEXISTS', KEYS[1], 'limit') == 0 then
  redis.call('HSET', KEYS[1], 'limit', static, 'remaining', static)
end
local limit = redis.call('HGET', KEYS[1], 'limit')
local remaining = redis.call('HGET', KEYS[1], 'remaining')
local resetAt = redis.call('HGET', KEYS[1], 'resetAt')
if resetAt and now >= tonumber(resetAt) then
  redis.call('HDEL', KEYS[1], 'resetAt')
  resetAt = false
  remaining = limit
  if limit then redis.call('HSET', KEYS[1], 'remaining', limit) else redis.call('HDEL', KEYS[1], 'remaining') end
end
if not remaining then
  if redis.call('ZCARD', KEYS[2]) > 0 then return {'wait', 0} end
  redis.call('ZADD', KEYS[2], now + holdMs, ticket)
  return {'granted', 0}
end
remaining = tonumber(remaining)
if remaining <= 0 then
  local resetsAt = resetAt and tonumber(resetAt) or (now + windowMs)
  return {'denied', resetsAt - now}
end
redis.call('HSET', KEYS[1], 'remaining', remaining - 1)
if not resetAt then redis.call('HSET', KEYS[1], 'resetAt', now + windowMs) end
redis.call('ZADD', KEYS[2], now + holdMs, ticket)
return {'granted', 0}
end
local result = take()
keep(windowMs, holdMs)
return result`;

const SETTLE = `${NOW}${KEEP}
local ticket, throttled, limit, observed, resetSeconds, windowMs = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local function settle()
redis.call('ZREM', KEYS[2], ticket)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if throttled == '1' then
  local reset = resetSeconds ~= '' and tonumber(resetSeconds) * 1000 or windowMs
  redis.call('HSET', KEYS[1], 'remaining', 0, 'resetAt', now + reset)
  return 1
end
if limit ~= '' then redis.call('HSET', KEYS[1], 'limit', limit) end
if resetSeconds ~= '' then redis.call('HSET', KEYS[1], 'resetAt', now + tonumber(resetSeconds) * 1000) end
if observed ~= '' then
  local value = tonumber(observed) - redis.call('ZCARD', KEYS[2])
  local current = redis.call('HGET', KEYS[1], 'remaining')
  if current and tonumber(current) < value then value = tonumber(current) end
  if value < 0 then value = 0 end
  redis.call('HSET', KEYS[1], 'remaining', value)
end
return 1
end
settle()
keep(windowMs)
return 1`;

const text = (value: number | undefined) => (value === undefined ? '' : String(value));

const LOCAL_TICKET = 'local:';

/**
 * A budget under `key` shared by every instance using this Redis. While Redis cannot be reached, each
 * instance keeps an in-process budget of the same rules instead, rather than failing or going unbounded.
 */
export function createRedisBudget(
  redis: Redis,
  key: string,
  options: BudgetOptions,
  log: Logger,
): RateBudget {
  const keys = [key, `${key}:in-flight`] as const;
  const local = createMemoryBudget(options);
  const outage = redisOutageLog(
    log,
    "redis budget unavailable; using this instance's own budget",
    'redis budget available again',
  );
  const fallBack = (error: unknown) => outage.failed(error, { budget: key });

  const tryTake = async (): Promise<TakeResult> => {
    const ticket = randomUUID();
    const [kind, waitMs] = (await redis.eval(
      TAKE,
      2,
      ...keys,
      options.windowMs,
      options.holdMs,
      ticket,
      text(options.limit),
    )) as [string, number];
    if (kind === 'granted') return { kind, ticket };
    if (kind === 'denied') return { kind, retryAfterMs: Number(waitMs) };
    return { kind: 'wait' };
  };

  return {
    async take() {
      try {
        const taken = await takeWithWait(tryTake, options.holdMs);
        outage.answered();
        return taken;
      } catch (error) {
        fallBack(error);
        const result = await local.take();
        return result.granted ? { granted: true, ticket: `${LOCAL_TICKET}${result.ticket}` } : result;
      }
    },
    async settle(grantedTicket, observed) {
      if (grantedTicket.startsWith(LOCAL_TICKET))
        return local.settle(grantedTicket.slice(LOCAL_TICKET.length), observed);
      await redis
        .eval(
          SETTLE,
          2,
          ...keys,
          grantedTicket,
          observed.throttled ? '1' : '',
          text(observed.limit),
          text(observed.remaining),
          text(observed.resetSeconds),
          options.windowMs,
        )
        .then(outage.answered, fallBack);
    },
    async remaining() {
      const value = await redis.hget(key, 'remaining');
      return value === null ? undefined : Number(value);
    },
    async limit() {
      const value = await redis.hget(key, 'limit').catch(() => local.limit());
      return value === null || value === undefined ? undefined : Number(value);
    },
  };
}
