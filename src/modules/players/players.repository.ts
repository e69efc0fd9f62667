import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { PlayersTables } from './players.tables.js';

/**
 * All SQL about the players the service has seen, run on `executor`: the database, or a transaction the
 * service started. Times are epoch milliseconds.
 */
export function createPlayersRepository(executor: Executor) {
  const db = tablesOf<PlayersTables>(executor);
  return {
    /**
     * A fetch of the player for `owner` (whose lookup made it; null: the service's own): first fetched
     * (once), last fetched and by whom, fetch count, and the name it goes by now.
     */
    async countFetch(
      uuid: string,
      name: string | undefined,
      at: number,
      owner: bigint | null,
    ): Promise<void> {
      const by = textOf(owner);
      await db
        .insertInto('players')
        .values({
          uuid,
          name: name ?? null,
          first_fetched_at: at,
          last_fetched_at: at,
          fetch_count: 1,
          last_fetched_by: by,
        })
        .onConflict((conflict) =>
          conflict.column('uuid').doUpdateSet((update) => ({
            name: name ?? update.ref('players.name'),
            last_fetched_at: at,
            last_fetched_by: by,
            fetch_count: update(update.ref('players.fetch_count'), '+', 1),
          })),
        )
        .execute();
    },

    /** A sighting of the player under `name`: first seen (once) and last seen. */
    async sawName(uuid: string, name: string, at: number): Promise<void> {
      await db
        .insertInto('player_names')
        .values({ uuid, name_key: name.toLowerCase(), name, first_seen_at: at, last_seen_at: at })
        .onConflict((conflict) =>
          conflict.columns(['uuid', 'name_key']).doUpdateSet({ name, last_seen_at: at }),
        )
        .execute();
    },

    /** Keeps `json`, fetched for `owner`, as the player's latest copy. */
    async keepLatestCopy(uuid: string, json: string, at: number, owner: bigint | null): Promise<void> {
      const by = textOf(owner);
      await db
        .insertInto('player_snapshots')
        .values({ uuid, body: json, fetched_at: at, fetched_by: by })
        .onConflict((conflict) =>
          conflict.column('uuid').doUpdateSet({ body: json, fetched_at: at, fetched_by: by }),
        )
        .execute();
    },

    /** The latest copy of a player, for when the upstream is unavailable. */
    async lastKnown(uuid: string): Promise<{ json: string; fetchedAt: number } | undefined> {
      const row = await db
        .selectFrom('player_snapshots')
        .select(['body', 'fetched_at'])
        .where('uuid', '=', uuid)
        .executeTakeFirst();
      return row && { json: row.body, fetchedAt: Number(row.fetched_at) };
    },

    /** The player last seen under this name (any case), and when. */
    async findByName(name: string): Promise<{ uuid: string; lastSeenAt: number } | undefined> {
      const row = await db
        .selectFrom('player_names')
        .select(['uuid', 'last_seen_at'])
        .where('name_key', '=', name.toLowerCase())
        .orderBy('last_seen_at', 'desc')
        .executeTakeFirst();
      return row && { uuid: row.uuid, lastSeenAt: Number(row.last_seen_at) };
    },
  };
}

/** An owner as its columns keep it: TEXT of decimal digits (null: nobody). */
const textOf = (owner: bigint | null): string | null => (owner === null ? null : owner.toString());
