import type { FastifyReply } from 'fastify';
import { sendJoinedJson } from '../../platform/http/joined-body.js';
import { type FailureOf, failureBodyOf } from '../../platform/http/lookup-result.js';
import { playerResultBody } from './players.reply.js';
import type { BulkItem } from './players-bulk.service.js';

const OPEN = Buffer.from('{"results":{');
const CLOSE = Buffer.from('}}');

/** An item's body: what `GET /player/{player}` would send for it, byte for byte. */
function itemBody(item: BulkItem, failureOf: FailureOf): Buffer {
  if (item.kind !== 'failed') return playerResultBody(item);
  const body = failureBodyOf('player', item.failure, failureOf);
  // Not a lookup's failure (the service hands out upstream failures only): the error handler's to answer.
  if (!body) throw item.failure;
  return body;
}

/**
 * A bulk read's answer, `{"results":{"<as given>":<PlayerResult>,...}}`, sent as each item's bytes one after
 * the other (a found player's are the cached body as it is): no parse, no serialization, no copy. Never kept by a cache: its
 * items differ in freshness, and a client keeps each as it likes.
 */
export function sendBulkResults(
  reply: FastifyReply,
  items: ReadonlyMap<string, BulkItem>,
  failureOf: FailureOf,
): FastifyReply {
  const parts: Buffer[] = [OPEN];
  let separator = '';
  for (const [key, item] of items) {
    parts.push(Buffer.from(`${separator}${JSON.stringify(key)}:`), itemBody(item, failureOf));
    separator = ',';
  }
  parts.push(CLOSE);
  reply.header('cache-control', 'no-store');
  return sendJoinedJson(reply, 200, parts);
}
