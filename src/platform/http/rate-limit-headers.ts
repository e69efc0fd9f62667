import type { FastifyReply } from 'fastify';
import type { Standing } from '../limits/buckets.js';
import type { HeaderDocs } from './response-docs.js';

/**
 * The one style of rate-limit header the service sends, whichever limit it is (an owner's work budget, an
 * owner's share of the upstream key, a client address's limit on issuing tokens): the IETF RateLimit
 * fields (draft-ietf-httpapi-ratelimit-headers), one list item per policy:
 *
 *   RateLimit-Policy: "work";q=600;w=10, "upstream";q=75;w=300
 *   RateLimit: "work";r=598;t=1, "upstream";r=71;t=212
 *
 * `q` units per `w` seconds; `r` units left and `t` seconds until the policy's quota is whole again.
 */
export type RateLimitPolicy = 'work' | 'upstream' | 'address';

/** A policy's standing as the headers say it. */
export type PolicyStanding = Pick<Standing, 'capacity' | 'windowSeconds' | 'remaining' | 'resetSeconds'>;

const append = (reply: FastifyReply, name: string, item: string) => {
  const known = reply.getHeader(name);
  reply.header(name, known === undefined ? item : `${String(known)}, ${item}`);
};

/** Adds the policy's items to the answer's RateLimit-Policy and RateLimit headers (after any already there). */
export function addRateLimitHeaders(
  reply: FastifyReply,
  policy: RateLimitPolicy,
  standing: PolicyStanding,
): void {
  append(reply, 'ratelimit-policy', `"${policy}";q=${standing.capacity};w=${standing.windowSeconds}`);
  append(reply, 'ratelimit', `"${policy}";r=${standing.remaining};t=${standing.resetSeconds}`);
}

const ITEM = (parameters: string) => `"(work|upstream|address)";${parameters}`;
const LIST = (parameters: string) => `^${ITEM(parameters)}(, ${ITEM(parameters)})*$`;

/** The two headers, documented: on every answer to a request whose limits are known. */
export const RATE_LIMIT_HEADERS: HeaderDocs = {
  'RateLimit-Policy': {
    description:
      'The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: ' +
      '`"work";q=<units>;w=<seconds>` the owner\'s budget of the service\'s work, `"upstream";q=<lookups>;w=<seconds>` ' +
      "the owner's share of the upstream key (player and profile lookups, once the key's limit is known), " +
      '`"address";q=<requests>;w=<seconds>` the client address\'s limit on routes that issue tokens.',
    schema: {
      type: 'string',
      pattern: LIST('q=[0-9]+;w=[0-9]+'),
      example: '"work";q=600;w=10, "upstream";q=75;w=300',
    },
  },
  RateLimit: {
    description:
      'Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` ' +
      'seconds until the quota is whole again.',
    schema: {
      type: 'string',
      pattern: LIST('r=[0-9]+;t=[0-9]+'),
      example: '"work";r=598;t=1, "upstream";r=71;t=212',
    },
  },
};
