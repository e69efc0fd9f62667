import { LRUCache } from 'lru-cache';
import type { InvalidationFeed } from './invalidation.js';

export interface KeptRecordsOptions<R> {
  /** How changes reach this instance; without one nothing is kept (every find loads). */
  readonly feed: InvalidationFeed | undefined;
  /** The most records kept, and for how long at most (a bound on any change that went unheard). */
  readonly max: number;
  readonly forMs: number;
  /** The record of a key, from where it lives. */
  readonly load: (key: string) => Promise<R | undefined>;
  /** The group a record belongs to: what a change names (the records of a token's chain). */
  readonly groupOf: (record: R) => string;
}

export interface KeptRecords<R> {
  /** The key's record: the copy kept in process while the feed is trusted, otherwise loaded. */
  find(key: string): Promise<R | undefined>;
  /** Drops this instance's copies of a group's records now (while the change is under way). */
  drop(group: string): void;
  /** Tells every instance that a group's records changed: call it once the change has committed. */
  changed(group: string): Promise<void>;
}

/**
 * Records kept in process between requests, dropped when an invalidation feed says their group changed.
 * A load that was under way while a change arrived is not kept (it may have read the state before the
 * change), so a copy is never older than the last change heard.
 */
export function createKeptRecords<R>({
  feed,
  max,
  forMs,
  load,
  groupOf,
}: KeptRecordsOptions<R>): KeptRecords<R> {
  if (!feed || max === 0 || forMs === 0)
    return { find: load, drop: () => undefined, changed: async () => undefined };
  const kept = new LRUCache<string, R & object>({ max, ttl: forMs });
  let generation = 0;
  const drop = (group: string) => {
    generation++;
    const dropped = [...kept.entries()].filter(([, record]) => groupOf(record) === group).map(([key]) => key);
    for (const key of dropped) kept.delete(key);
  };
  feed.listen({
    invalidated: (groups) => {
      for (const group of groups) drop(group);
    },
    reset: () => {
      generation++;
      kept.clear();
    },
  });
  return {
    async find(key) {
      if (!feed.trusted()) return load(key);
      const copy = kept.get(key);
      if (copy !== undefined) return copy;
      const started = generation;
      const record = await load(key);
      // Trust is asked first: asking may itself drop every copy (a write by another process noticed), and
      // then this load, which may predate that write, must not be kept either.
      if (record !== undefined && feed.trusted() && started === generation)
        kept.set(key, record as R & object);
      return record;
    },
    drop,
    changed: (group) => feed.publish([group]),
  };
}
