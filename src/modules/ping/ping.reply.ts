import type { FastifyReply } from 'fastify';
import type { PingDay } from './ping.service.js';

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
export function sendPingHistory(reply: FastifyReply, days: readonly PingDay[]): FastifyReply {
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
  const body = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const [text, encoding] of pieces) offset += body.write(text, offset, encoding);
  return reply.type('application/json; charset=utf-8').send(body);
}
