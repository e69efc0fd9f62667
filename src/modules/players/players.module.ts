import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Config } from '../../config.js';
import type { CacheEntry } from '../../platform/cache/cache.js';
import { createCaching } from '../../platform/cache/caching.js';
import type { Database } from '../../platform/db/database.js';
import { createUpstreamMetrics } from '../../upstream/upstream-metrics.js';
import { createUpstreams } from '../../upstream/upstreams.js';
import { createProfilesService, type ProfilesService } from '../profiles/profiles.service.js';
import { createPlayersRepository } from './players.repository.js';
import { createPlayersService, type PlayersService } from './players.service.js';

/** How long a player or username answer stays fresh: found answers and not-found answers differ. */
function freshness(foundSeconds: number, notFoundSeconds: number) {
  return (entry: CacheEntry) => (entry.status === 404 ? notFoundSeconds : foundSeconds) * 1000;
}

export interface PlayerData {
  readonly players: PlayersService;
  readonly profiles: ProfilesService;
  close(): Promise<void>;
}

/** The upstream-backed services (players and their profiles) over one cache, one set of upstream clients. */
export function createPlayerData(
  config: Config,
  {
    db,
    redis,
    registry,
    log,
  }: { db: Database; redis: Redis | undefined; registry: Registry; log: FastifyBaseLogger },
): PlayerData {
  const { cache: freshnessConfig } = config;
  const keyPrefix = config.redisKeyPrefix;
  const upstreams = createUpstreams(config.upstream, {
    redis,
    keyPrefix,
    metrics: createUpstreamMetrics(registry),
    log,
  });
  const caching = createCaching(freshnessConfig, { redis, keyPrefix, registry, log });
  const staleIfErrorMs = freshnessConfig.staleIfErrorSeconds * 1000;
  const players = createPlayersService({
    hypixel: upstreams.hypixel,
    mojang: upstreams.mojang,
    repository: createPlayersRepository(db),
    players: caching.resource({
      name: 'player',
      freshMs: freshness(freshnessConfig.playerFreshSeconds, freshnessConfig.notFoundFreshSeconds),
      staleIfErrorMs,
    }),
    usernames: caching.resource({
      name: 'username',
      freshMs: freshness(freshnessConfig.usernameFreshSeconds, freshnessConfig.notFoundFreshSeconds),
      staleIfErrorMs,
    }),
    log,
  });
  const profiles = createProfilesService({
    hypixel: upstreams.hypixel,
    players,
    profiles: caching.resource({
      name: 'profiles',
      freshMs: () => freshnessConfig.profilesFreshSeconds * 1000,
      staleIfErrorMs,
    }),
  });
  return { players, profiles, close: () => upstreams.close() };
}
