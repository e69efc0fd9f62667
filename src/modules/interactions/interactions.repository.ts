import { tablesOf } from '../../platform/db/repository-view.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { PagePosition } from '../../platform/pagination.js';
import type { InteractionLogsTable, InteractionsTables } from './interactions.tables.js';

export interface LogRecord {
  readonly id: string;
  readonly fingerprint: string;
  readonly receivedAt: number;
  readonly owner: bigint;
  readonly userId: bigint;
  readonly serverId: bigint | null;
  /** The log as received, without the interaction token, as JSON. */
  readonly document: string;
}

export interface Sighting {
  readonly id: bigint;
  readonly name: string | null;
  readonly at: number;
}

export interface LogFilter {
  readonly userId?: bigint;
  readonly serverId?: bigint;
  /** Only logs received at or after this time (epoch ms). */
  readonly since?: number;
}

/**
 * All SQL about interaction logs and the users and servers they mention, run on `executor`: the database,
 * or a transaction the service started. Times are epoch milliseconds.
 */
export function createInteractionsRepository(executor: Executor) {
  const db = tablesOf<InteractionsTables>(executor);
  return {
    /** Inserts the logs whose fingerprint is not stored yet; the others are left as they are. */
    async insertNew(logs: readonly LogRecord[]): Promise<void> {
      if (logs.length === 0) return;
      await db
        .insertInto('interaction_logs')
        .values(
          logs.map((log) => ({
            id: log.id,
            fingerprint: log.fingerprint,
            received_at: log.receivedAt,
            owner: log.owner.toString(),
            user_id: log.userId.toString(),
            server_id: log.serverId?.toString() ?? null,
            document: log.document,
          })),
        )
        .onConflict((conflict) => conflict.column('fingerprint').doNothing())
        .execute();
    },

    async findByFingerprints(fingerprints: readonly string[]): Promise<Map<string, LogRecord>> {
      if (fingerprints.length === 0) return new Map();
      const rows = await db
        .selectFrom('interaction_logs')
        .selectAll()
        .where('fingerprint', 'in', fingerprints)
        .execute();
      return new Map(rows.map((row) => [row.fingerprint, toRecord(row)]));
    },

    /** Records the users seen: their latest username, first and last seen. One entry per user. */
    async sawUsers(users: readonly Sighting[]): Promise<void> {
      if (users.length === 0) return;
      await db
        .insertInto('interaction_users')
        .values(
          users.map((user) => ({
            user_id: user.id.toString(),
            username: user.name ?? '',
            first_seen_at: user.at,
            last_seen_at: user.at,
          })),
        )
        .onConflict((conflict) =>
          conflict.column('user_id').doUpdateSet((update) => ({
            username: update.ref('excluded.username'),
            last_seen_at: update.ref('excluded.last_seen_at'),
          })),
        )
        .execute();
    },

    /** Records the servers seen: their latest name (a name left out keeps the known one). One per server. */
    async sawServers(servers: readonly Sighting[]): Promise<void> {
      if (servers.length === 0) return;
      await db
        .insertInto('interaction_servers')
        .values(
          servers.map((server) => ({
            server_id: server.id.toString(),
            server_name: server.name,
            first_seen_at: server.at,
            last_seen_at: server.at,
          })),
        )
        .onConflict((conflict) =>
          conflict.column('server_id').doUpdateSet((update) => ({
            server_name: update.fn.coalesce('excluded.server_name', 'interaction_servers.server_name'),
            last_seen_at: update.ref('excluded.last_seen_at'),
          })),
        )
        .execute();
    },

    /** Up to `limit` logs, newest first (received_at, then id), after `position` when given. */
    async list(filter: LogFilter, limit: number, position?: PagePosition): Promise<LogRecord[]> {
      let query = db.selectFrom('interaction_logs').selectAll();
      if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId.toString());
      if (filter.serverId !== undefined) query = query.where('server_id', '=', filter.serverId.toString());
      if (filter.since !== undefined) query = query.where('received_at', '>=', filter.since);
      if (position) {
        query = query.where((where) =>
          where.or([
            where('received_at', '<', position.at),
            where.and([where('received_at', '=', position.at), where('id', '<', position.id)]),
          ]),
        );
      }
      const rows = await query.orderBy('received_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toRecord);
    },

    /** Deletes up to `limit` of the oldest logs received before `cutoff`; how many it deleted. */
    async deleteReceivedBefore(cutoff: number, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('interaction_logs')
        .where('id', 'in', (select) =>
          select
            .selectFrom('interaction_logs')
            .select('id')
            .where('received_at', '<', cutoff)
            .orderBy('received_at')
            .limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function toRecord(row: InteractionLogsTable): LogRecord {
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    receivedAt: Number(row.received_at),
    owner: BigInt(row.owner),
    userId: BigInt(row.user_id),
    serverId: row.server_id === null ? null : BigInt(row.server_id),
    document: row.document,
  };
}
