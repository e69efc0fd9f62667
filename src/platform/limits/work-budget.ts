import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ErrorKinds } from '../errors.js';
import { addRateLimitHeaders } from '../http/rate-limit-headers.js';
import type { Logger } from '../logger.js';
import type { BucketPolicy, Buckets, Standing } from './buckets.js';

/**
 * Each owner's budget of the service's own work, so that no owner's traffic makes the service slow for
 * the others: a token bucket of cost units per owner (buckets.ts), every request of an owner charged what
 * it costs. A request is charged before its body is read (its route's cost and its body's size), so a
 * refused one costs almost nothing; work whose size is known only once done is charged after it
 * (`chargeWork`: the days a ping history read returned, the samples of a batch), and puts the owner in
 * debt until the bucket has refilled it.
 */
export interface WorkBudgetSettings {
  /** Units per window of an owner without a budget of their own; also the most they may spend at once. */
  readonly units: number;
  readonly windowSeconds: number;
  /**
   * The longest a refused request's answer is held, and never past the time it would be admitted: a client
   * that waits Retry-After loses nothing, and one that retries at once costs the service one answer per
   * hold, not one per loop of its own.
   */
  readonly refusalDelayMs: number;
}

/** What a route's request costs before anything is done: a read 1, a durable write 5, and its body. */
export const WorkCost = { read: 1, write: 5 } as const;
/** Reading a request body costs one unit per this many bytes (parsing is most of a large body's cost). */
export const BODY_BYTES_PER_UNIT = 1024;

export interface WorkBudget {
  /** Admits `cost` units of the owner's work, or throws 429 WORK_BUDGET_EXHAUSTED (after holding it). */
  admit(owner: bigint, cost: number): Promise<Standing>;
  /** Charges work already done. */
  charge(owner: bigint, cost: number): Promise<Standing>;
  standing(owner: bigint): Promise<Standing>;
}

export interface WorkBudgetDeps {
  readonly buckets: Buckets;
  readonly settings: WorkBudgetSettings;
  /** The units per window an operator gave the owner, if any (never throws: the default then applies). */
  readonly unitsOf: (owner: bigint) => Promise<number | undefined>;
}

export function createWorkBudget({ buckets, settings, unitsOf }: WorkBudgetDeps): WorkBudget {
  const windowMs = settings.windowSeconds * 1000;
  const policyOf = async (owner: bigint): Promise<BucketPolicy> => ({
    capacity: (await unitsOf(owner)) ?? settings.units,
    windowMs,
  });
  const keyOf = (owner: bigint) => `work:${owner}`;

  return {
    async admit(owner, cost) {
      const admission = await buckets.take(keyOf(owner), cost, await policyOf(owner));
      if (admission.admitted) return admission.standing;
      const held = Math.min(admission.retryAfterMs, settings.refusalDelayMs);
      if (held > 0) await sleep(held);
      const retryAfterSeconds = Math.max(1, Math.ceil((admission.retryAfterMs - held) / 1000));
      const { capacity, windowSeconds } = admission.standing;
      throw AppError.of(ErrorKinds.WORK_BUDGET_EXHAUSTED, {
        developerReason:
          `this owner's budget is ${capacity} units per ${windowSeconds} s (a cached read costs 1, heavier work ` +
          `more: see RateLimit-Policy and GET /auth/me); this request needs ${cost}; retry after ` +
          `${retryAfterSeconds} s, or ask the operator for a larger budget`,
        headers: {
          'retry-after': String(retryAfterSeconds),
          'ratelimit-policy': `"work";q=${capacity};w=${windowSeconds}`,
          ratelimit: `"work";r=${admission.standing.remaining};t=${admission.standing.resetSeconds}`,
        },
      });
    },
    charge: async (owner, cost) => buckets.charge(keyOf(owner), cost, await policyOf(owner)),
    standing: async (owner) => buckets.standing(keyOf(owner), await policyOf(owner)),
  };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Units a request of this route costs before its body (WorkCost.read unless given). */
    workCost?: number;
  }
  interface FastifyRequest {
    /** The owner whose budget this request is charged to, and where it stands; set by the route guard. */
    work?: { readonly budget: WorkBudget; readonly owner: bigint; standing: Standing; bodyCharged: boolean };
  }
}

/** What a request costs before it is read: its route's cost, and its body by its Content-Length. */
function upfrontCost(request: FastifyRequest): { cost: number; bodyCharged: boolean } {
  const base = request.routeOptions.config.workCost ?? WorkCost.read;
  const length = Number(request.headers['content-length']);
  if (!Number.isFinite(length) || length <= 0) return { cost: base, bodyCharged: false };
  return { cost: base + Math.ceil(length / BODY_BYTES_PER_UNIT), bodyCharged: true };
}

/** Admits the request's upfront cost from the owner's budget (429 when refused); the route guard calls it. */
export async function admitRequest(
  budget: WorkBudget,
  request: FastifyRequest,
  owner: bigint,
): Promise<void> {
  const { cost, bodyCharged } = upfrontCost(request);
  request.work = { budget, owner, standing: await budget.admit(owner, cost), bodyCharged };
}

/** Charges the request's owner for work done whose size is known only now (no-op on an unguarded route). */
export async function chargeWork(request: FastifyRequest, units: number): Promise<void> {
  const work = request.work;
  if (!work || units <= 0) return;
  work.standing = await work.budget.charge(work.owner, units);
}

/**
 * A body that came without a Content-Length (chunked) is charged once read, by its size; the charge is not
 * waited for (a failed one is logged).
 */
export function chargeUncountedBody(request: FastifyRequest, bytes: number, log: Pick<Logger, 'warn'>): void {
  const work = request.work;
  if (!work || work.bodyCharged) return;
  work.bodyCharged = true;
  chargeWork(request, Math.ceil(bytes / BODY_BYTES_PER_UNIT)).catch((error: unknown) =>
    log.warn({ err: error }, 'could not charge a request body to its owner'),
  );
}

/** Every answer to a request charged to an owner says where the owner's budget stands (RateLimit headers). */
export const workBudgetHeaders = fp(async (app: FastifyInstance) => {
  app.addHook('onSend', async (request, reply) => {
    if (request.work) addRateLimitHeaders(reply, 'work', request.work.standing);
  });
});
