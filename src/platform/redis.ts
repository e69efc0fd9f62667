import { type Command, Redis, type RedisOptions as RedisClientOptions } from 'ioredis';
import type { Logger } from './logger.js';

/** How long a Redis command may take before the caller treats Redis as unavailable. */
const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** How often a connection that is up asks Redis whether it still answers. */
const REDIS_HEARTBEAT_MS = 500;

export interface RedisOptions {
  /** Shown by CLIENT LIST, so an operator can tell this service's connections (and deployments) apart. */
  connectionName?: string;
  /** Told when a heartbeat went unanswered and the connection is dropped. */
  onSilent?: () => void;
  /** How long a command may take (tests shorten it); REDIS_COMMAND_TIMEOUT_MS by default. */
  commandTimeoutMs?: number;
}

/**
 * A Redis connection that fails fast instead of queueing while Redis is away: the callers (cache, limits,
 * readiness) each know a better fallback than waiting. It reconnects by itself.
 *
 * A Redis that stops answering without closing the connection (a partition, a paused server) would make
 * every command wait out its timeout, one after the other: a cold player lookup, eight commands, took
 * 9 s. So the connection PINGs every REDIS_HEARTBEAT_MS; a PING that times out drops the connection
 * (`onSilent` is told), and until Redis answers again every command fails at once (not connected, no
 * offline queue), so the callers take their fallbacks without waiting. Dropping it also discards the
 * commands that timed out, which would otherwise still run when Redis answers again (a budget charged twice).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new PatientRedis(
    options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
    {
      ...(options.connectionName ? { connectionName: options.connectionName } : {}),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    },
    url,
  );
  dropWhenSilent(redis, options.onSilent);
  return redis;
}

/**
 * ioredis with a command timeout that reads what has arrived before it gives up. ioredis's own
 * `commandTimeout` rejects a command as soon as its timer runs; after the event loop was busy for longer
 * than the timeout (a large answer serialized, a collection), the timers run before the loop reads the
 * sockets, so a command whose answer was already waiting failed as "timed out": the budget fell back on
 * the instance's own count and the heartbeat dropped a healthy connection. Here the timer lets the loop
 * read its sockets once (a `setImmediate` runs after the poll phase) before failing the command.
 * A command failed so is never sent again: ioredis would resend it after a reconnect, when its caller has
 * long taken its fallback. `sendCommand` and a Command's `promise`, `isResolved` and `reject` are ioredis's
 * public API (its typings); every command, pipelined, scripted and resent ones included, goes through
 * `sendCommand`.
 */
class PatientRedis extends Redis {
  readonly #commandTimeoutMs: number;

  /** `options` with the connection's address in them (`duplicate`), or beside them as a URL. */
  constructor(commandTimeoutMs: number, options: RedisClientOptions, url?: string) {
    if (url === undefined) super(options);
    else super(url, options);
    this.#commandTimeoutMs = commandTimeoutMs;
  }

  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    // ioredis sends the commands a dropped connection left unanswered again once it reconnects, those that
    // timed out too: their callers took their fallbacks, so they must not run late (a budget charged twice).
    if (timedOut.has(command)) return command.promise;
    // Timed once, from its first sending (as ioredis did): a resent command keeps its deadline.
    if (!command.isResolved && !timed.has(command)) failUnanswered(command, this.#commandTimeoutMs);
    return super.sendCommand(command, stream);
  }

  /** A second connection like this one (a subscriber), with the same timeout. */
  override duplicate(override?: Partial<RedisClientOptions>): Redis {
    return new PatientRedis(this.#commandTimeoutMs, { ...this.options, ...override });
  }
}

/** The commands failed as timed out: never sent again. */
const timedOut = new WeakSet<Command>();
/** The commands whose timer is set. */
const timed = new WeakSet<Command>();

function failUnanswered(command: Command, timeoutMs: number): void {
  timed.add(command);
  const timer = setTimeout(
    () =>
      setImmediate(() => {
        if (command.isResolved) return;
        timedOut.add(command);
        command.reject(new Error('Command timed out'));
      }),
    timeoutMs,
  );
  const clear = () => clearTimeout(timer);
  command.promise.then(clear, clear);
}

function dropWhenSilent(redis: Redis, onSilent: (() => void) | undefined): void {
  let asking = false;
  const heartbeat = setInterval(() => {
    if (asking || redis.status !== 'ready') return;
    asking = true;
    redis
      .ping()
      .catch((error: Error) => {
        // Only silence: a refused or closed connection is already being reconnected by ioredis.
        if (redis.status !== 'ready' || !/timed out/i.test(error.message)) return;
        onSilent?.();
        redis.disconnect(true);
      })
      .finally(() => {
        asking = false;
      });
  }, REDIS_HEARTBEAT_MS);
  heartbeat.unref();
  redis.once('end', () => clearInterval(heartbeat));
}

export async function pingRedis(redis: Redis): Promise<void> {
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`Redis answered PING with ${answer}`);
}

/** What a user of Redis with a fallback says of an outage: once as it starts, once as it ends. */
export interface RedisOutageLog {
  /** A command failed and the fallback is taken: a warning, unless this outage was told already. */
  failed(error: unknown, fields?: Record<string, unknown>): void;
  /** A command answered: the end of the outage, if there was one, is told. */
  answered(): void;
  /** The command's answer (told as answered), or undefined when Redis fails it (told as failed). */
  attempt<T>(command: Promise<T>, fields?: Record<string, unknown>): Promise<T | undefined>;
}

/**
 * Logs a Redis outage once as it starts and once as it ends, not on every call meanwhile: every request
 * makes several Redis calls, and each would log a warning with its stack (four lines per lookup).
 */
export function redisOutageLog(log: Logger, failedMessage: string, backMessage: string): RedisOutageLog {
  let failing = false;
  const outage: RedisOutageLog = {
    failed(error, fields = {}) {
      if (failing) return;
      failing = true;
      log.warn({ err: error, ...fields }, failedMessage);
    },
    answered() {
      if (!failing) return;
      failing = false;
      log.info(backMessage);
    },
    attempt: (command, fields) =>
      command.then(
        (answer) => {
          outage.answered();
          return answer;
        },
        (error: unknown) => {
          outage.failed(error, fields);
          return undefined;
        },
      ),
  };
  return outage;
}
