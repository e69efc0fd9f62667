import {
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import pino from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Log lines gathered before one write: a write per request line cost a system call per request. */
const LOG_BUFFER_BYTES = 4096;
/** A quiet moment's lines are written within this time all the same. */
const LOG_FLUSH_MS = 100;

/**
 * The most log bytes held while the destination does not take them (a log reader that stopped reading);
 * lines beyond are dropped, and counted, rather than held until memory runs out.
 */
export const LOG_MAX_HELD_BYTES = 16 * 1024 * 1024;
/** How long closing waits for the held lines to be written before giving them up. */
export const LOG_CLOSE_DEADLINE_MS = 2000;

/** A log destination that gathers lines: `close` writes what it holds (within a deadline) and stops. */
export interface LogDestination extends NodeJS.WritableStream {
  close(): Promise<void>;
}

/**
 * Where the service's log lines go (standard output, or a file): written in batches of about 4 KiB, off the
 * request's path, instead of one synchronous write per line, and at least every 100 ms. What it holds is
 * written when the app closes and when the process exits (pino registers that); a process killed outright
 * (SIGKILL) can lose its last 100 ms of lines.
 *
 * A destination that stops taking lines (its reader stalled) costs no unbounded memory: beyond
 * `LOG_MAX_HELD_BYTES` held, lines are dropped, and a line says how many once writing resumes; closing
 * waits `LOG_CLOSE_DEADLINE_MS` at most for what is held, then gives it up (a synchronous write to a full
 * pipe would block the process for good). Writes block as standard output does: a write to a pipe whose
 * reader stalled for good keeps one thread of libuv's pool, and so the process's exit, waiting (its
 * supervisor's kill ends it); a pipe opened without blocking avoids that but is retried only every 100 ms,
 * too slow for a reader that merely lags.
 */
export function logDestination(dest: number | string = 1): LogDestination {
  const destination = pino.destination({
    dest,
    sync: false,
    minLength: LOG_BUFFER_BYTES,
    // The destination measures its last pending chunk (Buffer.byteLength, flattening the text) on every line
    // it takes: chunks of twice a write's size (it must be more than minLength), not its 16 KiB default.
    maxWrite: 2 * LOG_BUFFER_BYTES,
    maxLength: LOG_MAX_HELD_BYTES,
  });
  let dropped = 0;
  /** Whether the line telling of dropped lines was itself dropped (the destination still full). */
  let toldInVain: boolean | undefined;
  destination.on('drop', () => {
    if (toldInVain === undefined) dropped++;
    else toldInVain = true;
  });
  const tellDropped = () => {
    if (dropped === 0) return;
    const count = dropped;
    dropped = 0;
    const line = `{"level":"warn","time":"${new Date().toISOString()}","dropped":${count},"msg":"log lines dropped: the log destination was not taking them"}\n`;
    toldInVain = false;
    destination.write(line);
    // Still full: the count waits for the next try.
    if (toldInVain) dropped += count;
    toldInVain = undefined;
  };
  const timer = setInterval(() => {
    tellDropped();
    destination.flush();
  }, LOG_FLUSH_MS);
  timer.unref();
  return Object.assign(destination as unknown as NodeJS.WritableStream, {
    close() {
      clearInterval(timer);
      tellDropped();
      return new Promise<void>((resolve) => {
        const giveUp = setTimeout(() => {
          // The exit hook would write what is held synchronously, and wait on a full pipe for ever.
          destination.flushSync = () => undefined;
          resolve();
        }, LOG_CLOSE_DEADLINE_MS);
        destination.flush(() => {
          clearTimeout(giveUp);
          resolve();
        });
      });
    },
  });
}

/** The logger services and platform parts write to (the app's pino logger, or a child of it). */
export type Logger = FastifyBaseLogger;

/** Keys whose values never reach a log line, at any depth, whatever their case. */
const SECRET_KEYS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'token',
  'access_token',
  'refresh_token',
  'interaction_token',
  'api-key',
  'api_key',
  'x-api-key',
  'password',
  'secret',
  'code_verifier',
  'x-csrf-token',
  'csrf_token',
]);

/**
 * Query parameters whose values never reach a log line, beside SECRET_KEYS: a sign-in's authorization code
 * and state (its callback's query) and a key. Too common as names of fields (an error's `code`) to be
 * redacted everywhere.
 */
const SECRET_PARAMS = new Set([...SECRET_KEYS, 'code', 'state', 'key']);
/**
 * The query is the client's to name, and a careless one puts a credential under a name of its own
 * (`?apikey=`, `?sig=`, `?X-Amz-Signature=`): any name with one of these in it is redacted too. None of
 * the service's own parameters has one.
 */
const SECRET_PARAM_PARTS = /key|token|secret|pass|sig|auth|session|cookie|csrf|jwt|credential|bearer/i;
/** A parameter's name is secret when one of its words is (`code[x]`, `code%00` are `code`) or holds a part. */
const isSecretParam = (name: string): boolean =>
  SECRET_PARAM_PARTS.test(name) ||
  name
    .toLowerCase()
    .split(/[^a-z0-9_]+/)
    .some((word) => SECRET_PARAMS.has(word));
/**
 * The service's credentials have shapes of their own, redacted wherever a URL holds them (a careless
 * client's path, a parameter of any name): an application key (`pds_` and 43 base64url characters) and a
 * token (a JWT: its header and payload are base64url JSON, `eyJ...`).
 */
const CREDENTIALS = /pds_[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]*)?/g;

export const REDACTED = '[redacted]';
const MAX_DEPTH = 12;

const isSecretKey = (key: string): boolean => SECRET_KEYS.has(key.toLowerCase());

/**
 * A copy of `value` with every secret-named key's value replaced; the same object when there is none,
 * so that ordinary log lines cost one walk and no copy.
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const redacted = redactSecrets(item, depth + 1);
      if (redacted !== item) {
        copy ??= [...value];
        copy[index] = redacted;
      }
    });
    return (copy ?? value) as T;
  }
  const prototype = Object.getPrototypeOf(value);
  const walkable = prototype === Object.prototype || prototype === null || value instanceof Error;
  if (!walkable) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, inner] of Object.entries(value)) {
    const redacted = isSecretKey(key) ? REDACTED : redactSecrets(inner, depth + 1);
    if (redacted !== inner) {
      copy ??= value instanceof Error ? errorFields(value) : { ...(value as Record<string, unknown>) };
      copy[key] = redacted;
    }
  }
  return (copy ?? value) as T;
}

/** An Error's own fields plus the ones pino's error serializer reads, which are not enumerable. */
function errorFields(error: Error): Record<string, unknown> {
  return { ...error, type: error.name, message: error.message, stack: error.stack };
}

/**
 * A URL with the values of secret-named query parameters replaced, and anything shaped like a credential
 * of the service. Parameters are taken apart at `&`, `;` and any later `?`, as some parsers do.
 */
export function redactUrl(url: string): string {
  const shown = url.includes('pds_') || url.includes('eyJ') ? url.replace(CREDENTIALS, REDACTED) : url;
  const query = shown.search(/[?;]/);
  if (query === -1) return shown;
  const parts = shown.slice(query + 1).split(/([&;?])/);
  for (let index = 0; index < parts.length; index += 2) {
    const pair = parts[index] ?? '';
    const name = pair.split('=', 1)[0] ?? '';
    if (pair.includes('=') && isSecretParam(safeDecode(name))) parts[index] = `${name}=${REDACTED}`;
  }
  return `${shown.slice(0, query + 1)}${parts.join('')}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * pino's `time` member, ISO 8601: formatted once per millisecond (a busy instance logs many lines in the
 * same one, and formatting a date is a good part of a line's cost).
 */
function isoTime(): () => string {
  let formattedAt = Number.NaN;
  let member = '';
  return () => {
    const now = Date.now();
    if (now !== formattedAt) {
      formattedAt = now;
      member = `,"time":"${new Date(now).toISOString()}"`;
    }
    return member;
  };
}

/** Fastify's logger options: JSON lines, ISO times, secrets redacted from every logged object. */
export function loggerOptions(
  level: LogLevel,
  stream?: NodeJS.WritableStream,
): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    timestamp: isoTime(),
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => redactSecrets(object),
    },
    serializers: {
      req: (request) => ({ method: request.method, url: redactUrl(request.url), id: request.id }),
    },
  };
}

/**
 * Fastify's per-request logging, as one line per request (not two), with the route pattern and status,
 * written through the request's logger (pino's public `info`). A line made by hand from the logger's private
 * parts (`pino.symbols`: its bindings, time and stream) was measured against it: about 0.8 us a line less
 * (300,000 lines in one process, five rounds: 0.62-0.98 us against 1.24-1.80 us), and in a cache hit's CPU time under
 * wrk 114.5 against 115.2 us a request (medians of six 6 s runs each, in turns; the runs themselves spread
 * from 100 to 131 us). Not worth depending on pino's internals for.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? null,
      url: redactUrl(request.url),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request completed');
  }
}
