import { randomUUID } from 'node:crypto';

/**
 * A UUID version 7 (RFC 9562): the first 48 bits are the epoch milliseconds `at`, the rest random (taken
 * from a version 4 UUID, whose generator draws from a buffered random pool). Rows keyed by it are inserted
 * in time order, so an index on the key grows at its end (one page written per burst) instead of at a
 * random page per row, as a random (version 4) key would.
 */
export function timeOrderedUuid(at: number = Date.now()): string {
  const time = at.toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx; its version digit (index 14) becomes 7.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
