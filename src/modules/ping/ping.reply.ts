import type { FastifyReply } from 'fastify';
import type { PingDay } from './ping.service.js';

/**
 * Whether a stored history looks like what the service writes (`JSON.stringify` of whole numbers): an
 * array, whole. Checking every character cost more than the rest of the answer (a year is 2 MB); a row cut
 * short or overwritten with something else fails this.
 */
const looksLikeHistory = (json: string): boolean => json.startsWith('[') && json.endsWith(']');

/**
 * Endpoint 6's PingHistory, written as text: each day's history goes out as the JSON it is kept as, so a
 * year of full days (half a million values) is neither parsed nor serialized on the way. A history that
 * is not what the service writes is a corrupt row: a 500, not a broken body.
 */
export function sendPingHistory(reply: FastifyReply, days: readonly PingDay[]): FastifyReply {
  const records = days.map((day) => {
    if (!looksLikeHistory(day.historyJson))
      throw new Error(`the stored ping history of ${day.day} is not a JSON array`);
    return (
      `{"avg":${day.avg},"min":${day.min},"max":${day.max},"date":"${day.day}","history":${day.historyJson},` +
      `"last_lobby":${JSON.stringify(day.lastLobby)},"last_ping":"${new Date(day.lastAt).toISOString()}"}`
    );
  });
  return reply.type('application/json; charset=utf-8').send(`{"data":[${records.join(',')}]}`);
}
