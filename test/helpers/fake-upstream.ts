import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of the two upstreams (Hypixel API v2 and Mojang's profile API) as a real HTTP server on
 * 127.0.0.1, serving the captured replies in test/fixtures/. It counts every call and can be told to
 * misbehave the ways the real ones do.
 */

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../fixtures/hypixel/${name}`, import.meta.url));

export const FIXTURE_PLAYERS = {
  minikloon: { uuid: '20934ef9488c465180a78f861586b4cf', name: 'Minikloon' },
  builder: { uuid: 'ef962ec2df6e48a2ac9d6062c1b84652', name: 'builder_247' },
  /** The owner of the two SkyBlock profiles in skyblock-profiles.json; no player fixture. */
  skyblocker: { uuid: 'ec1811e6822b4843bcd4fef82f75deb7', name: 'SkyBlocker' },
} as const;

export const FAKE_API_KEY = 'test-hypixel-key';

export interface Misbehaviour {
  /** 429 with `throttle: true` (and `global: true` when asked) to every Hypixel call. */
  throttle?: false | { global?: boolean };
  /** Wait this long before answering anything. */
  delayMs?: number;
  /** Answer every call with this 5xx status and a Cloudflare-style HTML page. */
  failWith?: false | number;
  /** Answer every call 200 with an HTML body instead of JSON. */
  garbage?: boolean;
  /** Answer only the next this many calls with a 502 page, then behave. */
  failNext?: number;
  /** Answer every call with exactly this (a wrong shape, an old server's 204...). */
  /**
   * Answer every call with this, its length declared (`Content-Length`) when `declareLength` is set, else
   * sent chunked (a length known only once it has all arrived).
   */
  answerWith?: { status: number; body: string; declareLength?: boolean };
}

export interface UpstreamCall {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly apiKey: string | undefined;
  readonly at: number;
}

export interface FakeUpstream {
  /** Base URL of both fakes: Hypixel under /v2/..., Mojang under /users/... */
  readonly url: string;
  readonly calls: UpstreamCall[];
  /** Calls whose path starts with the given prefix (`/v2/player`, `/users/profiles`). */
  callsTo(prefix: string): UpstreamCall[];
  misbehave(how: Misbehaviour): void;
  /** Back to normal behaviour, calls forgotten. */
  reset(): void;
  /** Makes a username known to the Mojang fake. */
  addName(name: string, uuid: string): void;
  /**
   * Answers `uuid` with this player object from now on (a player who changed), or with this JSON text of
   * one; `reset` restores the fixtures.
   */
  setPlayer(uuid: string, player: unknown): void;
  /**
   * Drops the connections of the calls it is holding back (delayMs) unanswered, as an upstream going away
   * would: the callers stop waiting at once (an app closing waits for its calls in flight).
   */
  hangUp(): void;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  /** Requests the fake Hypixel key allows per window (sent in RateLimit-Limit). */
  readonly rateLimit?: number;
  readonly rateLimitWindowSeconds?: number;
  /**
   * A PlayerResult body (`{"success":true,"player":{...}}`) to answer any UUID without a fixture with, its
   * player's uuid swapped for the one asked, instead of `player: null`: the bench fills a cache with as many
   * distinct players as it likes this way. Unset, such a UUID never joined (as for the tests).
   */
  readonly anyPlayer?: Buffer;
}

/**
 * Copies of `template` for any UUID: its text cut around every occurrence of its player's uuid (the `uuid`
 * field, and wherever else Hypixel repeats it), so that a copy is a join, not a parse and a serialization.
 */
function playerCopies(template: Buffer): (uuid: string) => Buffer {
  const { player } = JSON.parse(template.toString('utf8')) as { player?: { uuid?: unknown } };
  if (typeof player?.uuid !== 'string') throw new Error('anyPlayer: the template has no player.uuid');
  const parts = template.toString('utf8').split(player.uuid);
  return (uuid) => Buffer.from(parts.join(uuid));
}

const CLOUDFLARE_PAGE = (status: number) =>
  `<!DOCTYPE html><html><head><title>api.hypixel.net | ${status}: Bad gateway</title></head>` +
  '<body><h1>Bad gateway</h1><p>Cloudflare Ray ID: 0123456789abcdef</p></body></html>';

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const limit = options.rateLimit ?? 120;
  const windowMs = (options.rateLimitWindowSeconds ?? 300) * 1000;
  const fixturePlayers = () =>
    new Map<string, Buffer>([
      [FIXTURE_PLAYERS.minikloon.uuid, fixture('player.json')],
      [FIXTURE_PLAYERS.builder.uuid, fixture('player-large.json')],
    ]);
  let players = fixturePlayers();
  const copyOf = options.anyPlayer ? playerCopies(options.anyPlayer) : undefined;
  const playerBody = (id: string) =>
    players.get(id) ?? copyOf?.(id) ?? Buffer.from('{"success":true,"player":null}');
  const profiles = fixture('skyblock-profiles.json');
  const profileMembers = new Set([
    FIXTURE_PLAYERS.skyblocker.uuid,
    'c33ccb93a7d7488e922216a84518d25d',
    'd4a5bde12f0b4c65966bf4b808850040',
  ]);
  const names = new Map<string, { id: string; name: string }>(
    Object.values(FIXTURE_PLAYERS).map((player) => [
      player.name.toLowerCase(),
      { id: player.uuid, name: player.name },
    ]),
  );

  const calls: UpstreamCall[] = [];
  /** The answers it is holding back (delayMs), each with its timer. */
  const holding = new Map<ServerResponse, NodeJS.Timeout>();
  let how: Misbehaviour = {};
  let windowStart = Date.now();
  let usedInWindow = 0;

  const json = (
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': bytes.length,
      ...headers,
    });
    response.end(bytes);
  };

  function hypixel(request: IncomingMessage, response: ServerResponse, url: URL, mode: Misbehaviour) {
    const now = Date.now();
    if (now - windowStart >= windowMs) {
      windowStart = now;
      usedInWindow = 0;
    }
    usedInWindow += 1;
    const rate = {
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': String(Math.max(0, limit - usedInWindow)),
      'ratelimit-reset': String(Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000))),
    };
    if (request.headers['api-key'] !== FAKE_API_KEY)
      return json(response, 403, { success: false, cause: 'Invalid API key' });
    if (mode.throttle || usedInWindow > limit) {
      const global = mode.throttle && mode.throttle.global === true ? { global: true } : {};
      return json(response, 429, { success: false, cause: 'Key throttle', throttle: true, ...global }, rate);
    }
    const uuid = url.searchParams.get('uuid');
    if (!uuid)
      return json(response, 400, { success: false, cause: 'Missing one or more fields [uuid]' }, rate);
    const id = uuid.replaceAll('-', '').toLowerCase();
    if (!/^[0-9a-f]{32}$/.test(id))
      return json(response, 422, { success: false, cause: 'Malformed UUID' }, rate);
    if (url.pathname === '/v2/player') return json(response, 200, playerBody(id), rate);
    if (url.pathname === '/v2/skyblock/profiles') {
      return json(response, 200, profileMembers.has(id) ? profiles : { success: true, profiles: null }, rate);
    }
    return json(response, 404, { success: false, cause: 'Invalid endpoint' });
  }

  function mojang(response: ServerResponse, url: URL) {
    const name = decodeURIComponent(url.pathname.slice('/users/profiles/minecraft/'.length));
    if (!/^[A-Za-z0-9_]{1,25}$/.test(name)) {
      return json(response, 400, { errorMessage: `Invalid username: ${name}`, path: url.pathname });
    }
    const profile = names.get(name.toLowerCase());
    if (!profile)
      return json(response, 404, {
        errorMessage: `Couldn't find any profile with name ${name}`,
        path: url.pathname,
      });
    return json(response, 200, profile);
  }

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const apiKey = request.headers['api-key'];
    calls.push({
      method: request.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      apiKey: typeof apiKey === 'string' ? apiKey : undefined,
      at: Date.now(),
    });
    // How to answer is decided now, as the request arrives: a delayed answer must not read (or use up)
    // the switches a later test sets.
    const mode = how;
    const failThisOne = (how.failNext ?? 0) > 0;
    if (failThisOne) how = { ...how, failNext: (how.failNext ?? 1) - 1 };
    const answer = () => {
      if (failThisOne) {
        response.writeHead(502, { 'content-type': 'text/html' });
        return response.end(CLOUDFLARE_PAGE(502));
      }
      if (mode.failWith) {
        response.writeHead(mode.failWith, { 'content-type': 'text/html' });
        return response.end(CLOUDFLARE_PAGE(mode.failWith));
      }
      if (mode.answerWith) {
        const { status, body, declareLength } = mode.answerWith;
        response.writeHead(status, {
          'content-type': 'application/json',
          ...(declareLength ? { 'content-length': Buffer.byteLength(body) } : {}),
        });
        return response.end(body);
      }
      if (mode.garbage) {
        response.writeHead(200, { 'content-type': 'text/html' });
        return response.end('<html><body>Just a moment...</body></html>');
      }
      if (url.pathname.startsWith('/v2/')) return hypixel(request, response, url, mode);
      if (url.pathname.startsWith('/users/profiles/minecraft/')) return mojang(response, url);
      return json(response, 404, { success: false, cause: 'Not found' });
    };
    if (!mode.delayMs) return answer();
    // A caller that gave up (timed out, closed) gets nothing: its held answer is dropped, so that no timer
    // outlives the test that set the delay (a 10 s one held its process that long after the tests).
    const held = setTimeout(() => {
      holding.delete(response);
      answer();
    }, mode.delayMs);
    holding.set(response, held);
    response.once('close', () => {
      clearTimeout(held);
      holding.delete(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    callsTo: (prefix) => calls.filter((call) => call.path.startsWith(prefix)),
    misbehave(next) {
      how = { ...how, ...next };
    },
    reset() {
      how = {};
      calls.length = 0;
      windowStart = Date.now();
      usedInWindow = 0;
      players = fixturePlayers();
    },
    addName(name, uuid) {
      names.set(name.toLowerCase(), { id: uuid, name });
    },
    setPlayer(uuid, player) {
      const text = typeof player === 'string' ? player : JSON.stringify(player);
      players.set(uuid, Buffer.from(`{"success":true,"player":${text}}`));
    },
    hangUp() {
      for (const [response, held] of holding) {
        clearTimeout(held);
        response.destroy();
      }
      holding.clear();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const held of holding.values()) clearTimeout(held);
        holding.clear();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
