import type { AppModule } from '../../platform/app-module.js';
import type { CacheEntry } from '../../platform/cache/cache.js';
import type { Caching } from '../../platform/cache/caching.js';
import { periodicJobOf } from '../../platform/db/periodic-job.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import type { Upstreams } from '../../upstream/upstreams.js';
import { HYPIXEL_PLAYER_SCHEMAS } from './hypixel-player.schemas.js';
import { playerHistoryRoutes } from './player-history.routes.js';
import { createPlayerHistoryService, type HistorySettings } from './player-history.service.js';
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
  /** Players' snapshots: how long they are kept, and how often the retention job runs. */
  readonly history: HistorySettings & { readonly retentionJobEveryMs: number };
  readonly log: Logger;
}

/** How long an answer stays fresh: found values and not-found ones (empty) differ. */
const freshness = (foundSeconds: number, notFoundSeconds: number) => (entry: CacheEntry) =>
  (entry.bytes.length === 0 ? notFoundSeconds : foundSeconds) * 1000;

/**
 * Players: `GET /player/{player}`, `POST /players`, the player domain API other modules call (resolve,
 * lookup), and each player's history (a snapshot per fetch that found them changed:
 * `/player/{player}/history` and `/sessions`), with its retention job.
 */
export function createPlayersModule({
  db,
  caching,
  upstreams,
  settings,
  history: historySettings,
  log,
}: PlayersModuleDeps): AppModule<PlayersService> {
  const staleIfErrorMs = settings.staleIfErrorSeconds * 1000;
  const history = createPlayerHistoryService({
    db,
    settings: historySettings,
    uuidOf: (player, owner) => service.uuidOf(player, owner),
  });
  const retention = periodicJobOf({
    name: 'player-history-retention',
    everyMs: historySettings.retentionJobEveryMs,
    db,
    log,
    run: async (stop) => {
      const unmade = await history.prepareMonths();
      return {
        deleted: await history.deleteExpired(stop),
        ...(unmade.length ? { monthsNotMade: unmade.length } : {}),
      };
    },
  });
  const service = createPlayersService({
    db,
    history,
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
  const single = playersRoutes(service, upstreams.quota);
  const bulk = playersBulkRoutes(createPlayersBulkService(service), upstreams.quota);
  const historyRoutes = playerHistoryRoutes(history);
  return {
    name: 'players',
    service,
    schemas: HYPIXEL_PLAYER_SCHEMAS,
    routes: async (app, options) => {
      await single(app, options);
      await bulk(app, options);
      await historyRoutes(app, options);
    },
    async start() {
      // The month partitions are made before the first snapshot (PostgreSQL; a month without one goes to
      // the default partition), then kept ahead by the job.
      const unmade = await history.prepareMonths().catch((error: unknown) => {
        log.warn({ err: error }, 'could not make the player history month partitions');
        return [];
      });
      if (unmade.length > 0)
        log.warn({ months: unmade.length }, 'player history months left in the default partition');
      retention.start();
    },
    close: retention.close,
  };
}
