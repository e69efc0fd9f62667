import { ApiError } from './errors.js';
import { parseJson } from './json.js';
import type { operations } from './schema.js';

type Operations = operations;
type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
/** The body of an operation's 200 answer. */
export type Answer<K extends keyof Operations> = Operations[K] extends { responses: { 200: infer Ok } }
  ? JsonOf<Ok>
  : never;
/** The JSON body an operation takes. */
export type RequestBody<K extends keyof Operations> = Operations[K] extends { requestBody: infer Body }
  ? JsonOf<NonNullable<Body>>
  : never;
/** The query an operation takes. */
export type Query<K extends keyof Operations> = Operations[K] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

/** A player found: `player` is a HypixelPlayer (hypixel.ts), its common fields typed. */
export type PlayerAnswer = Answer<'getPlayer'>;
/** A player's SkyBlock profiles: each a SkyBlockProfile (hypixel.ts). */
export type ProfilesAnswer = Answer<'getGamemodeProfiles'>;
export type HistoryQuery = Omit<Query<'getPlayerHistory'>, 'fields'> & { fields: string | readonly string[] };

/** One policy of the last `RateLimit` header seen: `remaining` units, whole again in `resetSeconds`. */
export interface RateLimitState {
  readonly remaining: number;
  readonly resetSeconds: number;
}

export interface ClientOptions {
  /** The service, e.g. `https://pds.example.com` (a path prefix is kept). */
  readonly baseUrl: string;
  /** An approved application's key (`pds_...`): exchanged for a token at the first call, and again when needed. */
  readonly key?: string;
  /** Or a token (from `token issue`, or kept from before), with its expiry when known. */
  readonly token?: string;
  readonly expiresAt?: string | Date;
  /** How many times a 429 (or a 503 with `Retry-After`) is retried after waiting what it says (default 3). */
  readonly maxRetries?: number;
  /** A `Retry-After` longer than this is not waited for: the ApiError is thrown at once (default 60). */
  readonly maxRetryAfterSeconds?: number;
  /**
   * Refresh a token this long before it expires (default 60 s, at most a quarter of its lifetime), so that
   * no call is made with a token about to expire.
   */
  readonly refreshBeforeSeconds?: number;
  /** Wait for the `"work"` budget to be whole again when the last answer said none is left (default true). */
  readonly respectRateLimit?: boolean;
  /** The fetch to use (default: the global one); the clock and the sleep, for schedulers. */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

interface Token {
  readonly token: string;
  /** Epoch ms; Infinity when unknown. */
  readonly expiresAt: number;
  /** When to refresh it ahead of its expiry (epoch ms). */
  readonly refreshAt: number;
}

interface Call {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, unknown>> | undefined;
  readonly body?: unknown;
  /** Whether the call carries the token (every call but the token exchanges). */
  readonly auth?: boolean;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `Retry-After` as seconds: delta-seconds or an HTTP date. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The IETF `RateLimit` header (`"work";r=598;t=1, "upstream";r=71;t=212`) by policy name. */
export function parseRateLimit(value: string | null): Map<string, RateLimitState> {
  const policies = new Map<string, RateLimitState>();
  for (const item of value?.split(',') ?? []) {
    const [name, ...parameters] = item.trim().split(';');
    if (!name) continue;
    const values = new Map(parameters.map((parameter) => parameter.trim().split('=') as [string, string]));
    const remaining = Number(values.get('r'));
    const resetSeconds = Number(values.get('t'));
    if (Number.isFinite(remaining) && Number.isFinite(resetSeconds)) {
      policies.set(name.replace(/^"|"$/g, ''), { remaining, resetSeconds });
    }
  }
  return policies;
}

/** The IETF `RateLimit-Policy` header (`"work";q=600;w=10, ...`) by policy name. */
export function parsePolicy(value: string | null): Map<string, { quota: number; windowSeconds: number }> {
  const policies = new Map<string, { quota: number; windowSeconds: number }>();
  for (const item of value?.split(',') ?? []) {
    const [name, ...parameters] = item.trim().split(';');
    if (!name) continue;
    const values = new Map(parameters.map((parameter) => parameter.trim().split('=') as [string, string]));
    const quota = Number(values.get('q'));
    const windowSeconds = Number(values.get('w'));
    if (quota > 0 && windowSeconds > 0) policies.set(name.replace(/^"|"$/g, ''), { quota, windowSeconds });
  }
  return policies;
}

function queryString(query: Readonly<Record<string, unknown>> | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

const segment = (value: string) => encodeURIComponent(value);

export type Client = ReturnType<typeof createClient>;

/**
 * A client of the Player Data Service. Give it a key (or a token): it exchanges the key for a token at
 * the first call, refreshes the token before it expires and once on a 401 `TOKEN_EXPIRED` (concurrent calls
 * share one exchange), waits out a 429's `Retry-After` (bounded), and throws every other failure as an
 * `ApiError`. IDs (`owner`, `user_id`, `server_id`) are read and sent as exact decimal strings.
 */
export function createClient(options: ClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const maxRetries = options.maxRetries ?? 3;
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 60;
  const refreshBeforeMs = (options.refreshBeforeSeconds ?? 60) * 1000;
  const respectRateLimit = options.respectRateLimit !== false;
  if (!options.key && !options.token) throw new TypeError('createClient: give a key or a token');

  const tokenOf = (token: string, expiresAt: number): Token => {
    const lifetime = expiresAt - now();
    return { token, expiresAt, refreshAt: expiresAt - Math.min(refreshBeforeMs, lifetime / 4) };
  };
  let current: Token | undefined = options.token
    ? tokenOf(
        options.token,
        options.expiresAt ? new Date(options.expiresAt).getTime() : Number.POSITIVE_INFINITY,
      )
    : undefined;
  /** The token exchange under way, which every call waiting for a token shares. */
  let renewing: Promise<Token> | undefined;
  let rateLimit = new Map<string, RateLimitState>();
  /** Until when the `"work"` budget is spent (epoch ms), as the last answer said. */
  let workResumesAt = 0;

  async function send(call: Call, token: string | undefined) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const response = await doFetch(`${baseUrl}${call.path}${queryString(call.query)}`, {
      method: call.method,
      headers,
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    });
    const text = await response.text();
    let body: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text !== '') {
      try {
        body = parseJson(text);
      } catch {
        body = text;
      }
    }
    const limits = parseRateLimit(response.headers.get('ratelimit'));
    if (limits.size > 0) {
      rateLimit = limits;
      const work = limits.get('work');
      if (work && work.remaining <= 0) {
        // The work budget refills continuously (q units per w seconds): a unit is back after w/q seconds,
        // sooner than `t`, the time until it is whole.
        const policy = parsePolicy(response.headers.get('ratelimit-policy')).get('work');
        const unitMs = policy ? (policy.windowSeconds * 1000) / policy.quota : Number.POSITIVE_INFINITY;
        workResumesAt = now() + Math.min(work.resetSeconds * 1000, unitMs);
      }
    }
    return { response, body };
  }

  const failure = (response: Response, body: unknown) =>
    new ApiError(response.status, body, {
      retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after'), now()),
      requestId: response.headers.get('x-request-id') ?? undefined,
    });

  /** Sends a call, waiting out `Retry-After` on a 429 (or a 503 that says it) up to maxRetries times. */
  async function sendWithRetries(call: Call, token: () => Promise<string | undefined>) {
    for (let attempt = 0; ; attempt++) {
      if (respectRateLimit && call.auth !== false && workResumesAt > now())
        await sleep(workResumesAt - now());
      const { response, body } = await send(call, await token());
      const retryable =
        response.status === 429 || (response.status === 503 && response.headers.has('retry-after'));
      if (!retryable) return { response, body };
      const error = failure(response, body);
      const wait = error.retryAfterSeconds ?? 1;
      if (attempt >= maxRetries || wait > maxRetryAfterSeconds) throw error;
      await sleep(wait * 1000);
    }
  }

  async function exchange(call: Call): Promise<Token> {
    const { response, body } = await sendWithRetries(call, async () => undefined);
    if (!response.ok) throw failure(response, body);
    const { token, expires_at } = body as Answer<'exchangeKey'>;
    return tokenOf(token, Date.parse(expires_at));
  }

  function renew(): Promise<Token> {
    renewing ??= (async () => {
      try {
        current = await newToken();
        return current;
      } finally {
        renewing = undefined;
      }
    })();
    return renewing;
  }

  async function newToken(): Promise<Token> {
    if (current) {
      try {
        return await exchange({
          method: 'POST',
          path: '/auth/refresh',
          body: { token: current.token },
          auth: false,
        });
      } catch (error) {
        if (!options.key || !(error instanceof ApiError) || error.status !== 401) throw error;
      }
    }
    if (!options.key) throw new Error('the token cannot be refreshed, and the client has no key');
    return await exchange({ method: 'POST', path: '/auth/token', body: { key: options.key }, auth: false });
  }

  /** The token to send: the current one, unless it is due for a refresh. */
  async function validToken(): Promise<string> {
    if (renewing) return (await renewing).token;
    if (!current || now() >= current.refreshAt) return (await renew()).token;
    return current.token;
  }

  async function request<T>(call: Call): Promise<T> {
    let sent: string | undefined;
    const token = async () => {
      sent = await validToken();
      return sent;
    };
    let { response, body } = await sendWithRetries(call, token);
    if (response.status === 401) {
      const error = failure(response, body);
      // Expired (a clock apart, a token kept too long): refresh once. Another 401 with a key: the token
      // was revoked or refreshed elsewhere: exchange the key once.
      const renewable =
        error.is('TOKEN_EXPIRED') ||
        (options.key !== undefined && error.names.some((n) => n.startsWith('TOKEN_')));
      if (!renewable) throw error;
      if (current?.token === sent) {
        if (error.is('TOKEN_EXPIRED')) await renew();
        else {
          current = undefined;
          await renew();
        }
      }
      ({ response, body } = await sendWithRetries(call, token));
    }
    if (!response.ok) throw failure(response, body);
    return body as T;
  }

  return {
    /** The last `RateLimit` header seen, by policy (`"work"`, `"upstream"`, `"address"`). */
    get rateLimit(): ReadonlyMap<string, RateLimitState> {
      return rateLimit;
    },
    /** The token in use (exchanging the key first when there is none yet), for another tool. */
    token: validToken,
    /** Any operation, for what the methods below do not cover; IDs in `body` as decimal strings. */
    request,

    me: () => request<Answer<'getCaller'>>({ method: 'GET', path: '/auth/me' }),
    /** A player by UUID (dashed or not) or username. A player who never joined: ApiError 404 (`lookup`). */
    player: (player: string) => request<PlayerAnswer>({ method: 'GET', path: `/player/${segment(player)}` }),
    /** Up to 100 players; each result is the single read's body (a failure is `success: false`, not thrown). */
    players: (players: readonly string[]) =>
      request<Answer<'getPlayers'>>({ method: 'POST', path: '/players', body: { players } }),
    history: (player: string, query: HistoryQuery) =>
      request<Answer<'getPlayerHistory'>>({
        method: 'GET',
        path: `/player/${segment(player)}/history`,
        query: { ...query, fields: typeof query.fields === 'string' ? query.fields : query.fields.join(',') },
      }),
    sessions: (player: string, query: Query<'getPlayerSessions'> = {}) =>
      request<Answer<'getPlayerSessions'>>({
        method: 'GET',
        path: `/player/${segment(player)}/sessions`,
        query,
      }),
    profiles: (player: string) =>
      request<ProfilesAnswer>({ method: 'GET', path: `/gamemode/profiles/${segment(player)}` }),
    pingHistory: (player: string, query: Query<'getPingHistory'> = {}) =>
      request<Answer<'getPingHistory'>>({ method: 'GET', path: `/ping/${segment(player)}`, query }),
    ingestPing: (player: string, body: RequestBody<'ingestPingSamples'>) =>
      request<Answer<'ingestPingSamples'>>({ method: 'POST', path: `/ping/${segment(player)}`, body }),
    logInteraction: (body: RequestBody<'logInteraction'>) =>
      request<Answer<'logInteraction'>>({ method: 'POST', path: '/messenger/logging/interaction', body }),
    interactionLogs: (query: Query<'listInteractionLogs'> = {}) =>
      request<Answer<'listInteractionLogs'>>({
        method: 'GET',
        path: '/messenger/logging/interaction',
        query,
      }),
    userProfile: (snowflake: string) =>
      request<Answer<'getMessengerUserProfile'>>({
        method: 'GET',
        path: `/messenger/user/${segment(snowflake)}/profile`,
      }),
  };
}
