import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, type ErrorKind, ErrorKinds } from '../errors.js';
import { addRateLimitHeaders } from '../http/rate-limit-headers.js';
import type { Logger } from '../logger.js';
import type { BucketPolicy, Buckets, Standing } from './buckets.js';

/**
 * Each owner's budget of the service's own work, so that no owner's traffic makes the service slow for
 * the others: a token bucket of cost units per owner (buckets.ts), every request of an owner charged what
 * it costs. A request is charged before its body is read (its route's cost and its body's size), so a
 * refused one costs almost nothing; work whose size is known only once done is charged after it
 * (`chargeWork`: the days a ping history read returned, the logs a listing returned), all of it, and puts
 * the owner in debt until the bucket has refilled it. So that many requests in flight at once cannot do
 * much more work than the budget before their debts land, an owner has a number of requests in flight at
 * once on an instance, in proportion to their budget.
 */
export interface WorkBudgetSettings {
  /** Units per window of an owner without a budget of their own; also the most they may spend at once. */
  readonly units: number;
  readonly windowSeconds: number;
  /**
   * How long a request over the budget (or beyond the requests in flight) waits for its turn before it is
   * refused: a client slightly over its budget sees a slower answer rather than an error, and one that
   * retries at once costs the service one answer per wait, not one per loop of its own.
   */
  readonly refusalDelayMs: number;
  /** Requests of one owner in flight at once on one instance, at the default budget (scaled with theirs). */
  readonly maxInFlight: number;
}

/** What a route's request costs before anything is done: a read 1, a durable write 5, and its body. */
export const WorkCost = { read: 1, write: 5 } as const;
/** Reading a request body costs one unit per this many bytes (parsing is most of a large body's cost). */
export const BODY_BYTES_PER_UNIT = 1024;
/**
 * Stored documents read back for an answer (interaction logs: parsed, then written out again) cost a unit
 * per this many bytes: measured, a page of 100 logs of 4 KiB took 50-80 ms, some 1,500 cached reads' worth.
 */
export const LISTED_BYTES_PER_UNIT = 256;
/** How often a request waiting for a slot in flight looks again. */
const SLOT_POLL_MS = 10;

/** A request admitted: where its owner's budget stands, and how to give its slot back once answered. */
export interface Admitted {
  readonly standing: Standing;
  release(): void;
}

export interface WorkBudget {
  /**
   * Admits `cost` units of the owner's work and takes a slot in flight, waiting up to `refusalDelayMs` for
   * both; or throws 429 WORK_BUDGET_EXHAUSTED / TOO_MANY_IN_FLIGHT.
   */
  admit(owner: bigint, cost: number): Promise<Admitted>;
  /**
   * Takes more units for an admitted request, before work it is about to do (a ping batch's samples, before
   * they are written), waiting up to `refusalDelayMs`; or throws 429 WORK_BUDGET_EXHAUSTED.
   */
  take(owner: bigint, cost: number): Promise<Standing>;
  /** Charges work already done (negative: gives back units taken ahead for work not done). */
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
  /** Requests in flight on this instance, by owner. */
  const inFlight = new Map<bigint, number>();
  const slotsOf = (capacity: number) =>
    Math.max(settings.maxInFlight, Math.floor((settings.maxInFlight * capacity) / settings.units));
  const leave = (owner: bigint) => {
    const left = (inFlight.get(owner) ?? 1) - 1;
    if (left > 0) inFlight.set(owner, left);
    else inFlight.delete(owner);
  };

  /**
   * One attempt: a slot (when the request takes one), then the units; the slot is given back if the units
   * are not there.
   */
  async function attempt(owner: bigint, cost: number, policy: BucketPolicy, slot: boolean): Promise<Attempt> {
    const slots = slotsOf(policy.capacity);
    if (slot && (inFlight.get(owner) ?? 0) >= slots)
      return { kind: ErrorKinds.TOO_MANY_IN_FLIGHT, slots, waitMs: SLOT_POLL_MS };
    // Taken before the bucket is asked: concurrent requests must not all see a free slot.
    if (slot) inFlight.set(owner, (inFlight.get(owner) ?? 0) + 1);
    const admission = await buckets.take(keyOf(owner), cost, policy).catch((error: unknown) => {
      if (slot) leave(owner);
      throw error;
    });
    if (admission.admitted) return { admitted: admission.standing };
    if (slot) leave(owner);
    return {
      kind: ErrorKinds.WORK_BUDGET_EXHAUSTED,
      standing: admission.standing,
      waitMs: admission.retryAfterMs,
    };
  }

  /** Takes the units (and a slot, when asked), waiting up to `refusalDelayMs`; 429 if they do not come. */
  async function waitFor(owner: bigint, cost: number, slot: boolean): Promise<Standing> {
    const policy = await policyOf(owner);
    const deadline = Date.now() + settings.refusalDelayMs;
    for (;;) {
      const outcome = await attempt(owner, cost, policy, slot);
      if ('admitted' in outcome) return outcome.admitted;
      const left = deadline - Date.now();
      if (left <= 0) {
        const standing =
          'standing' in outcome ? outcome.standing : await buckets.standing(keyOf(owner), policy);
        throw refusal(outcome, cost, policy, standing);
      }
      await sleep(Math.min(Math.max(1, outcome.waitMs), left));
    }
  }

  return {
    async admit(owner, cost) {
      const standing = await waitFor(owner, cost, true);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        leave(owner);
      };
      return { standing, release };
    },
    take: (owner, cost) => waitFor(owner, cost, false),
    charge: async (owner, cost) => buckets.charge(keyOf(owner), cost, await policyOf(owner)),
    standing: async (owner) => buckets.standing(keyOf(owner), await policyOf(owner)),
  };
}

type Attempt =
  | { readonly admitted: Standing }
  | { readonly kind: typeof ErrorKinds.TOO_MANY_IN_FLIGHT; readonly slots: number; readonly waitMs: number }
  | {
      readonly kind: typeof ErrorKinds.WORK_BUDGET_EXHAUSTED;
      readonly standing: Standing;
      readonly waitMs: number;
    };

/** The 429 of a request that waited its time and still could not go, with the owner's standing. */
function refusal(
  outcome: Exclude<Attempt, { admitted: Standing }>,
  cost: number,
  policy: BucketPolicy,
  standing: Standing,
): AppError {
  const { capacity, windowSeconds } = standing;
  const retryAfterSeconds = Math.max(1, Math.ceil(outcome.waitMs / 1000));
  const developerReason =
    'slots' in outcome
      ? `this owner has ${outcome.slots} requests in progress on this instance, the most at once for a budget of ` +
        `${policy.capacity} units; wait for one to finish`
      : `this owner's budget is ${capacity} units per ${windowSeconds} s (a cached read costs 1, heavier work ` +
        `more: see RateLimit-Policy and GET /auth/me); this request needs ${cost}; retry after ` +
        `${retryAfterSeconds} s, or ask the operator for a larger budget`;
  return AppError.of(outcome.kind as ErrorKind, {
    developerReason,
    headers: {
      'retry-after': String(retryAfterSeconds),
      'ratelimit-policy': `"work";q=${capacity};w=${windowSeconds}`,
      ratelimit: `"work";r=${standing.remaining};t=${standing.resetSeconds}`,
    },
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Units a request of this route costs before its body (WorkCost.read unless given). */
    workCost?: number;
  }
  interface FastifyRequest {
    /** The owner whose budget this request is charged to, and where it stands; set by the route guard. */
    work?: {
      readonly budget: WorkBudget;
      readonly owner: bigint;
      standing: Standing;
      /** Units taken ahead for the body, until it is read (settled by its size) or the answer goes out unread. */
      bodyReserved: number | undefined;
    };
  }
}

/**
 * What a request costs before it is read: its route's cost, and its body, taken ahead: by its Content-Length,
 * or the most the route takes for a body without one (chunked). A declared body larger than the route takes
 * costs nothing: it is refused (413) unread. What is taken ahead is settled once the body is read, and given
 * back whole if the answer goes out without reading it (`settleUnreadBody`).
 */
function upfrontCost(request: FastifyRequest): { cost: number; bodyReserved: number | undefined } {
  const base = request.routeOptions.config.workCost ?? WorkCost.read;
  const { bodyLimit } = request.routeOptions;
  const length = Number(request.headers['content-length']);
  let body = 0;
  if (Number.isFinite(length)) body = length > bodyLimit ? 0 : Math.ceil(length / BODY_BYTES_PER_UNIT);
  else if (request.headers['transfer-encoding'] !== undefined)
    body = Math.ceil(bodyLimit / BODY_BYTES_PER_UNIT);
  return { cost: base + body, bodyReserved: body > 0 ? body : undefined };
}

/**
 * Admits the request's upfront cost from the owner's budget, with a slot in flight given back when its
 * answer is done (`response` closes); 429 when refused. The route guard calls it.
 */
export async function admitRequest(
  budget: WorkBudget,
  request: FastifyRequest,
  response: ServerResponse,
  owner: bigint,
): Promise<void> {
  const { cost, bodyReserved } = upfrontCost(request);
  const admitted = await budget.admit(owner, cost);
  response.once('close', admitted.release);
  request.work = { budget, owner, standing: admitted.standing, bodyReserved };
}

/**
 * Takes units from the request's owner for work it is about to do, known only once the request is read (the
 * samples of a ping batch): 429 when the budget cannot pay, and the work is not done. No-op unguarded.
 */
export async function takeWork(request: FastifyRequest, units: number): Promise<void> {
  const work = request.work;
  if (!work || units <= 0) return;
  work.standing = await work.budget.take(work.owner, units);
}

/** Charges the request's owner for work done whose size is known only now (no-op on an unguarded route). */
export async function chargeWork(request: FastifyRequest, units: number): Promise<void> {
  const work = request.work;
  if (!work || units === 0) return;
  work.standing = await work.budget.charge(work.owner, units);
}

/**
 * Settles the units taken ahead for the request's body (once): `used` of them stay charged, the rest are
 * given back. A failed give-back is logged, not thrown.
 */
function settleReserved(request: FastifyRequest, used: number, log: Pick<Logger, 'warn'>): Promise<void> {
  const work = request.work;
  if (work?.bodyReserved === undefined) return Promise.resolve();
  const unused = work.bodyReserved - used;
  work.bodyReserved = undefined;
  return chargeWork(request, -unused).catch((error: unknown) =>
    log.warn({ err: error }, 'could not settle a request body with its owner'),
  );
}

/**
 * A body once read is paid by its size: what was taken ahead beyond it (a chunked body, taken at the
 * route's most) is given back. Not waited for.
 */
export function settleBody(request: FastifyRequest, bytes: number, log: Pick<Logger, 'warn'>): void {
  void settleReserved(request, Math.ceil(bytes / BODY_BYTES_PER_UNIT), log);
}

/** Every answer to a request charged to an owner says where the owner's budget stands (RateLimit headers). */
export const workBudgetHeaders = fp(async (app: FastifyInstance) => {
  app.addHook('onSend', async (request, reply) => {
    const work = request.work;
    if (!work) return;
    // A body taken ahead and never read (a GET's, a refused media type's, a guard's refusal) is given back:
    // a body is paid only when read. But a 413: a chunked body was read up to the route's most (a declared
    // one over it was taken nothing for). Rare: most answers go out without an extra turn.
    if (work.bodyReserved !== undefined)
      await settleReserved(request, reply.statusCode === 413 ? work.bodyReserved : 0, request.log);
    addRateLimitHeaders(reply, 'work', work.standing);
  });
});
