import type { AppModule } from '../../platform/app-module.js';
import type { CacheEntry } from '../../platform/cache/cache.js';
import type { Caching } from '../../platform/cache/caching.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import type { Upstreams } from '../../upstream/upstreams.js';
import { playersRoutes } from './players.routes.js';
import { createPlayersService, type PlayersService } from './players.service.js';
import { playersBulkRoutes } from './players-bulk.routes.js';
import { createPlayersBulkService } from './players-bulk.service.js';

export interface PlayersSettings {
  readonly playerFreshSeconds: number;
  readonly usernameFreshSeconds: number;
  readonly notFoundFreshSeconds: number;
  /** How long past freshness a copy may still be served when the upstream fails. */
  readonly staleIfErrorSeconds: number;
}

export interface PlayersModuleDeps {
  readonly db: Executor;
  readonly caching: Caching;
  readonly upstreams: Pick<Upstreams, 'hypixel' | 'mojang' | 'quota'>;
  readonly settings: PlayersSettings;
  readonly log: Logger;
}

/** How long an answer stays fresh: found values and not-found ones (empty) differ. */
const freshness = (foundSeconds: number, notFoundSeconds: number) => (entry: CacheEntry) =>
  (entry.bytes.length === 0 ? notFoundSeconds : foundSeconds) * 1000;

/** Players: `GET /player/{player}`, `POST /players`, and the player domain API other modules call (resolve, lookup). */
export function createPlayersModule({
  db,
  caching,
  upstreams,
  settings,
  log,
}: PlayersModuleDeps): AppModule<PlayersService> {
  const staleIfErrorMs = settings.staleIfErrorSeconds * 1000;
  const service = createPlayersService({
    db,
    hypixel: upstreams.hypixel,
    mojang: upstreams.mojang,
    players: caching.resource({
      name: 'player',
      freshMs: freshness(settings.playerFreshSeconds, settings.notFoundFreshSeconds),
      staleIfErrorMs,
    }),
    usernames: caching.resource({
      name: 'username',
      freshMs: freshness(settings.usernameFreshSeconds, settings.notFoundFreshSeconds),
      staleIfErrorMs,
    }),
    log,
  });
  const bulk = playersBulkRoutes(createPlayersBulkService(service), upstreams.quota);
  const single = playersRoutes(service, upstreams.quota);
  return {
    name: 'players',
    service,
    routes: async (app, options) => {
      await single(app, options);
      await bulk(app, options);
    },
  };
}
