import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

/** What a holder of in-process copies hears from an invalidation feed. */
export interface InvalidationListener {
  /** These keys changed somewhere: drop their copies. */
  invalidated(keys: readonly string[]): void;
  /** Changes may have been missed: drop every copy. */
  reset(): void;
}

/**
 * How the instances sharing a database tell each other that something they may keep in process changed
 * (a token revoked), so that each can keep copies and still see every change at once. While the feed
 * cannot promise to deliver every change (its subscription is down), copies must not be trusted.
 */
export interface InvalidationFeed {
  /**
   * Whether copies kept in process may be used now. False while changes may be going unheard; when it
   * turns true again the listeners have been reset.
   */
  trusted(): boolean;
  /**
   * Whether it carries other instances' changes to this one (Redis pub/sub). Without that, an instance that
   * cannot reach the database cannot tell whether another instance, which still can, changed something.
   */
  readonly reachesOtherInstances: boolean;
  /** Tells every instance, this one first, that these keys changed. Call it after the change commits. */
  publish(keys: readonly string[]): Promise<void>;
  listen(listener: InvalidationListener): void;
  close(): Promise<void>;
}

/**
 * How often, at most, a local feed asks whether another process wrote: the question costs about 2 us (it
 * reads SQLite's shared memory), too much for every request of a hot path; a change by the command line
 * is then heard within this time.
 */
const EXTERNAL_WRITES_CHECK_MS = 10;

/**
 * A feed without Redis: publishing tells the process's own listeners. `changedElsewhere`, when given, says
 * whether another process wrote since it was last asked (on SQLite: the command line revoking a token on
 * the same file); then every copy is dropped. It is asked at most every 10 ms. Where other processes'
 * writes cannot be asked about so cheaply (several instances on PostgreSQL), they are heard through a
 * change mark the database keeps (`watchingChangeMark`), read every second.
 */
export function createLocalInvalidationFeed(
  changedElsewhere?: () => boolean,
  now: () => number = performance.now.bind(performance),
): InvalidationFeed {
  const listeners: InvalidationListener[] = [];
  let checkedAt = Number.NEGATIVE_INFINITY;
  return {
    trusted() {
      if (changedElsewhere && now() - checkedAt >= EXTERNAL_WRITES_CHECK_MS) {
        checkedAt = now();
        if (changedElsewhere()) for (const listener of listeners) listener.reset();
      }
      return true;
    },
    reachesOtherInstances: false,
    async publish(keys) {
      for (const listener of listeners) listener.invalidated(keys);
    },
    listen: (listener) => void listeners.push(listener),
    close: async () => undefined,
  };
}

/** A feed that also watches a change mark; `check` reads it. */
export interface MarkWatchingFeed extends InvalidationFeed {
  /** Reads the mark; when it moved since the last read, every listener is reset. */
  check(): Promise<void>;
}

/**
 * `feed`, backed by a mark the database keeps: a number that moves with every change that makes a kept
 * copy wrong (moved by the database, whoever writes). Each `check` reads it, and when it moved every copy
 * is dropped: a change whose publish failed, or made by a process that does not publish (the command line
 * without Redis), is heard at the next check instead of when the copies expire. Copies are trusted only
 * while the mark was read within `staleAfterMs` (a change before the first read, or while reads fail,
 * would pass unnoticed), or, where `feed` carries other instances' changes, while the mark's store cannot
 * be reached at all (`isOutage`): then whatever changes it is told through the feed. A check asked while
 * one is under way joins it.
 */
export function watchingChangeMark(
  feed: InvalidationFeed,
  readMark: () => Promise<number>,
  staleAfterMs: number,
  {
    now = performance.now.bind(performance),
    isOutage = () => false,
  }: {
    now?: () => number;
    /**
     * Whether a failed read of the mark means the mark's store cannot be reached at all (an outage): then
     * nothing can change it either, and copies stay trusted while the feed is (a change made meanwhile
     * through another way to the store is heard through the feed, or at the first read after).
     */
    isOutage?: (error: unknown) => boolean;
  } = {},
): MarkWatchingFeed {
  const listeners: InvalidationListener[] = [];
  let seen: number | undefined;
  let seenAt = Number.NEGATIVE_INFINITY;
  let outage = false;
  let reading: Promise<void> | undefined;
  async function read(): Promise<void> {
    try {
      const mark = await readMark();
      if (seen !== undefined && mark !== seen) for (const listener of listeners) listener.reset();
      seen = mark;
      seenAt = now();
      outage = false;
    } catch (error) {
      // Only once the mark has been read: copies are never trusted before a first read. And only where the
      // feed carries other instances' changes: the store may be out of this instance's reach alone (a
      // partition, its own pool exhausted) while another instance still writes to it.
      outage = seen !== undefined && feed.reachesOtherInstances && isOutage(error);
      throw error;
    } finally {
      reading = undefined;
    }
  }
  return {
    trusted: () => (outage || now() - seenAt < staleAfterMs) && feed.trusted(),
    reachesOtherInstances: feed.reachesOtherInstances,
    publish: (keys) => feed.publish(keys),
    listen(listener) {
      listeners.push(listener);
      feed.listen(listener);
    },
    close: () => feed.close(),
    check() {
      reading ??= read();
      return reading;
    },
  };
}

/** Keys travel in one message, one per line. */
const SEPARATOR = '\n';
/**
 * How often a subscription proves it still stands (a PING through it): a connection can go silent without
 * closing (a peer or a route gone), and a subscription that hears nothing must stop being trusted.
 */
const HEARTBEAT_MS = 2000;
/** How long after a failed SUBSCRIBE the feed connects again to retry it. */
const SUBSCRIBE_RETRY_MS = 500;

/**
 * A feed through Redis pub/sub on `channel`: every instance subscribes on a connection of its own. Copies
 * are trusted only while the subscription stands; when it comes back, every copy is dropped first (what
 * was published meanwhile was not heard). Publishing also tells this instance's listeners at once.
 */
export function createRedisInvalidationFeed(redis: Redis, channel: string, log: Logger): InvalidationFeed {
  const listeners: InvalidationListener[] = [];
  // A connection of its own (a subscribed connection takes no other command), named after the main one.
  // It subscribes on every 'ready' below; ioredis's own resubscription is off: it sends SUBSCRIBE without
  // handling its failure, and a connection closing just then rejected it unhandled (a crash).
  const subscriber = redis.duplicate({
    connectionName: `${redis.options.connectionName ?? 'redis'}:subscriber`,
    autoResubscribe: false,
  });
  let subscribed = false;
  const invalidate = (keys: readonly string[]) => {
    for (const listener of listeners) listener.invalidated(keys);
  };
  const lost = () => {
    if (!subscribed) return;
    subscribed = false;
    log.warn({ channel }, 'invalidation feed lost: reading from the database until it is back');
  };
  subscriber.on('error', (error) => log.warn({ err: error, channel }, 'invalidation feed connection error'));
  subscriber.on('close', lost);
  subscriber.on('end', lost);
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) invalidate(message.split(SEPARATOR));
  });
  // A SUBSCRIBE that fails is tried again on a new connection: left alone, the feed would never be trusted
  // (every copy read from the database) until the connection happened to drop. It fails when Redis refuses
  // it, or when its answer comes after the command timeout: an event loop stalled for a second (a start
  // under load) runs the timeout before it reads the answer that arrived meanwhile, and the server holds a
  // subscription this side no longer waits for. A new connection starts both sides afresh.
  let closing = false;
  let retry: NodeJS.Timeout | undefined;
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(
      () => {
        for (const listener of listeners) listener.reset();
        subscribed = true;
        log.info({ channel }, 'invalidation feed subscribed');
      },
      (error: unknown) => {
        if (closing) return;
        log.warn({ err: error, channel }, 'invalidation feed could not subscribe: connecting again');
        if (retry) return;
        retry = setTimeout(() => {
          retry = undefined;
          if (!closing) subscriber.disconnect(true);
        }, SUBSCRIBE_RETRY_MS);
        retry.unref();
      },
    );
  });
  subscriber
    .connect()
    .catch((error: unknown) => log.warn({ err: error, channel }, 'invalidation feed not connected yet'));
  // A PING that does not come back in the command timeout: stop trusting, and connect again.
  const heartbeat = setInterval(() => {
    if (!subscribed) return;
    subscriber.ping().catch(() => {
      lost();
      subscriber.disconnect(true);
    });
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    reachesOtherInstances: true,
    trusted: () => subscribed,
    async publish(keys) {
      if (keys.length === 0) return;
      invalidate(keys);
      await redis.publish(channel, keys.join(SEPARATOR)).catch((error: unknown) => {
        // The others keep trusting their copies only while subscribed; a publisher cut off from a Redis the
        // others still reach is the one gap left, closed by the copies' own time limit.
        log.error({ err: error, channel }, 'could not publish an invalidation');
      });
    },
    listen: (listener) => void listeners.push(listener),
    async close() {
      closing = true;
      clearInterval(heartbeat);
      clearTimeout(retry);
      subscribed = false;
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}

/**
 * A feed that only tells the instances (a one-shot process such as the command line): it keeps nothing
 * itself, so it is never trusted and hears nothing.
 */
export function createRedisInvalidationPublisher(
  redis: Redis,
  channel: string,
  onFailure: (error: unknown) => void,
): InvalidationFeed {
  return {
    trusted: () => false,
    reachesOtherInstances: true,
    async publish(keys) {
      // Told after the change committed: a publish that fails does not undo it, and the instances hear it
      // through the database's change mark instead.
      if (keys.length > 0) await redis.publish(channel, keys.join(SEPARATOR)).catch(onFailure);
    },
    listen: () => undefined,
    close: async () => undefined,
  };
}
