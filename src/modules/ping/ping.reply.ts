import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { type StoredBody, storedBody } from '../../platform/http/stored-body.js';
import type { PingDay, PingHistory } from './ping.service.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** The range a history was asked for (the query string), part of what names an answer. */
type AskedRange = { readonly from?: string; readonly to?: string; readonly limit?: number };
/** Bookkeeping bytes per kept answer beyond its bodies and key. */
const ANSWER_OVERHEAD_BYTES = 256;

/**
 * Endpoint 6's answers, kept as bytes per player and range while the player's revision does not move: a
 * read of a year whose days did not change sends the bytes it sent before (2 MB, no serialization), with
 * an ETag naming the player, the revision and the range (304 for a client that has them), its compressed copies
 * made once. Least recently read go first once they pass `maxBytes` (bodies, copies and keys counted).
 */
export function createPingHistoryReplies(maxBytes: number) {
  const answers = new LRUCache<string, { readonly revision: number; readonly body: StoredBody }>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: ({ body }, key) => body.size + key.length + ANSWER_OVERHEAD_BYTES,
  });
  return {
    send(request: FastifyRequest, reply: FastifyReply, history: PingHistory, range: AskedRange) {
      const { from = '', to = '', limit = '' } = range;
      const key = `${history.uuid} ${from} ${to} ${limit}`;
      let answer = answers.get(key);
      if (answer?.revision !== history.revision) {
        // The tag names the player, the revision and the range: the same tag, the same bytes, on every instance.
        const tag = `${history.uuid}.${history.revision}.${from}.${to}.${limit}`;
        const made = {
          revision: history.revision,
          body: storedBody(JSON_TYPE, historyBytes(history.days), tag, () => {
            // A compressed copy was made: counted again (lru-cache sizes an entry when it is set, so it is set
            // anew), unless it is no longer the kept answer.
            if (answers.peek(key) !== made) return;
            answers.delete(key);
            answers.set(key, made);
          }),
        };
        answers.set(key, made);
        answer = made;
      }
      return answer.body.send(request, reply);
    },
    /** The bytes the kept answers count, bodies and copies included. */
    keptBytes: (): number => answers.calculatedSize,
  };
}

/**
 * Whether a stored history looks like what the service writes (`JSON.stringify` of whole numbers, so ASCII
 * only): an array, whole. Checking every character cost more than the rest of the answer (a year is 2 MB);
 * a row cut short or overwritten with something else fails this.
 */
const looksLikeHistory = (json: string): boolean => json.startsWith('[') && json.endsWith(']');

/**
 * Endpoint 6's PingHistory, written straight into one buffer: each day's history goes out as the JSON text
 * it is kept as (ASCII, copied byte for byte), so a year of full days (half a million values, 2 MB) is
 * neither parsed, serialized, nor joined into one string and encoded again. A history that is not what the
 * service writes is a corrupt row: a 500, not a broken body.
 */
export function historyBytes(days: readonly PingDay[]): Buffer {
  const pieces: [text: string, encoding: 'utf8' | 'latin1'][] = [['{"data":[', 'latin1']];
  days.forEach((day, index) => {
    if (!looksLikeHistory(day.historyJson))
      throw new Error(`the stored ping history of ${day.day} is not a JSON array`);
    pieces.push(
      [
        `${index === 0 ? '' : ','}{"avg":${day.avg},"min":${day.min},"max":${day.max},"date":"${day.day}","history":`,
        'latin1',
      ],
      [day.historyJson, 'latin1'],
      [
        `,"last_lobby":${JSON.stringify(day.lastLobby)},"last_ping":"${new Date(day.lastAt).toISOString()}"}`,
        'utf8',
      ],
    );
  });
  pieces.push([']}', 'latin1']);
  let length = 0;
  for (const [text, encoding] of pieces)
    length += encoding === 'latin1' ? text.length : Buffer.byteLength(text);
  const body = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  for (const [text, encoding] of pieces) offset += body.write(text, offset, encoding);
  return body;
}

export type PingHistoryReplies = ReturnType<typeof createPingHistoryReplies>;
