import type { ErrorObject } from 'ajv';
import type { Env } from './config-env.js';
import { MIN_JWT_SECRET_BYTES } from './platform/auth/jwt-secret.js';

/**
 * What is wrong with a configuration, in words a person setting the variables understands: the rules
 * across variables that a schema cannot say, and each schema error as a line naming its variable (never
 * a secret's value).
 */

export function secretProblems(given: Record<string, unknown>): string[] {
  const secret = given.JWT_SECRET;
  if (typeof secret === 'string' && Buffer.byteLength(secret) < MIN_JWT_SECRET_BYTES) {
    // The value itself is never echoed: it is a secret.
    return [`JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes (got ${Buffer.byteLength(secret)})`];
  }
  if (secret === undefined && given.NODE_ENV === 'production') {
    return [`JWT_SECRET is required when NODE_ENV=production (at least ${MIN_JWT_SECRET_BYTES} bytes)`];
  }
  return [];
}

/** Node refuses a server whose headers may take longer than the whole request. */
export function timeoutProblems(env: Env): string[] {
  return env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS
    ? [
        `HEADERS_TIMEOUT_MS must not be more than REQUEST_TIMEOUT_MS (got ${env.HEADERS_TIMEOUT_MS} > ${env.REQUEST_TIMEOUT_MS})`,
      ]
    : [];
}

export const corsOriginsOf = (value: string): string[] => value.split(',').map((origin) => origin.trim());

/**
 * Browsers send `Origin` serialized (lowercase scheme and host, no default port) and it is compared
 * exactly, so an entry that is not its own serialization (`https://Example.com`, `https://x.com:443`, a
 * user, query or fragment) would never match: refused, with what a browser would send.
 */
export function corsProblems(env: Env): string[] {
  if (env.CORS_ORIGINS === undefined || env.CORS_ORIGINS === '*') return [];
  return corsOriginsOf(env.CORS_ORIGINS).flatMap((entry) => {
    const origin = URL.canParse(entry) ? new URL(entry).origin : undefined;
    if (origin === entry) return [];
    return [
      origin === undefined
        ? `CORS_ORIGINS entry ${JSON.stringify(entry)} is not a valid origin (scheme://host[:port])`
        : `CORS_ORIGINS entry ${JSON.stringify(entry)} is not an origin as a browser sends it: write ${origin} (lowercase, no default port, user, query or fragment)`,
    ];
  });
}

/** Discord sign-in is on with all three of its variables, off with none; the callback must be this service's. */
export function discordProblems(env: Env): string[] {
  const names = ['DISCORD_CLIENT_ID', 'DISCORD_CLIENT_SECRET', 'DISCORD_REDIRECT_URI'] as const;
  const given = names.filter((name) => env[name] !== undefined);
  if (given.length === 0) return [];
  if (given.length < names.length) {
    const missing = names.filter((name) => env[name] === undefined);
    return [
      `Discord sign-in needs ${names.join(', ')} together: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set`,
    ];
  }
  const redirect = URL.canParse(env.DISCORD_REDIRECT_URI ?? '')
    ? new URL(env.DISCORD_REDIRECT_URI ?? '')
    : undefined;
  if (!redirect?.pathname.endsWith('/auth/discord/callback'))
    return ["DISCORD_REDIRECT_URI must be the address of this service's /auth/discord/callback"];
  return [];
}

/** Variables whose values never appear in an error message. */
const SECRET_VARIABLES = new Set(['JWT_SECRET', 'HYPIXEL_API_KEY', 'METRICS_TOKEN', 'DISCORD_CLIENT_SECRET']);

/** What each pattern means, said in words a person setting the variable understands. */
const PATTERN_HINTS: Record<string, string> = {
  DATABASE_URL: 'must be sqlite:<path> or postgres://...',
  REDIS_URL: 'must be redis://... or rediss://...',
  PUBLIC_URL: 'must be an http(s) URL such as https://api.example.com',
  CORS_ORIGINS:
    'must be * or a comma-separated list of origins such as https://a.example,https://b.example:8443',
  METRICS_TOKEN: 'must be printable ASCII without spaces',
  DISCORD_CLIENT_ID: "must be the Discord application's client ID (digits)",
  DISCORD_CLIENT_SECRET: 'must be printable ASCII without spaces, 8 to 256 characters',
  DISCORD_REDIRECT_URI: 'must be an http(s) URL ending in /auth/discord/callback',
  DISCORD_API_URL: 'must be an http(s) URL such as https://discord.com/api',
  PORTAL_REVIEWERS: 'must be a comma-separated list of Discord IDs',
  HYPIXEL_API_URL: 'must be an http(s) URL such as https://api.hypixel.net',
  MOJANG_API_URL: 'must be an http(s) URL such as https://api.mojang.com',
};

export function describe(error: ErrorObject, given: Record<string, unknown>): string {
  const name = error.instancePath.slice(1);
  const expected =
    error.keyword === 'enum'
      ? `must be one of ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')}`
      : error.keyword === 'pattern'
        ? (PATTERN_HINTS[name] ?? `must match ${error.params.pattern}`)
        : (error.message ?? 'is invalid');
  return SECRET_VARIABLES.has(name)
    ? `${name} ${expected}`
    : `${name} ${expected} (got ${JSON.stringify(given[name])})`;
}
