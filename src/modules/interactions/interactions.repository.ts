import { type Kysely, sql } from 'kysely';
import { newestFirst } from '../../platform/db/keyset-page.js';
import { dialectOf, tablesOf } from '../../platform/db/repository-view.js';
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

/** A log to store, with the names it gives the user and the server it mentions. */
export interface NewLogRow {
  readonly record: LogRecord;
  readonly username: string;
  readonly serverName: string | null;
}

/** A user or server seen in an owner's log: its name there, and when. */
export interface Sighting {
  readonly owner: bigint;
  readonly id: bigint;
  readonly name: string | null;
  readonly at: number;
}

export interface LogFilter {
  /** Only the logs this owner logged (every owner's when undefined). */
  readonly owner?: bigint;
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

  /** Records the users seen, per owner: their latest username, first and last seen. One per owner and user. */
  async function sawUsers(users: readonly Sighting[]): Promise<void> {
    if (users.length === 0) return;
    await db
      .insertInto('interaction_users')
      .values(
        users.map((user) => ({
          owner: user.owner.toString(),
          user_id: user.id.toString(),
          username: user.name ?? '',
          first_seen_at: user.at,
          last_seen_at: user.at,
        })),
      )
      .onConflict((conflict) =>
        conflict.columns(['owner', 'user_id']).doUpdateSet((update) => ({
          username: update.ref('excluded.username'),
          last_seen_at: update.ref('excluded.last_seen_at'),
        })),
      )
      .execute();
  }

  /**
   * Records the servers seen, per owner: their latest name (a name left out keeps the known one). One per
   * owner and server.
   */
  async function sawServers(servers: readonly Sighting[]): Promise<void> {
    if (servers.length === 0) return;
    await db
      .insertInto('interaction_servers')
      .values(
        servers.map((server) => ({
          owner: server.owner.toString(),
          server_id: server.id.toString(),
          server_name: server.name,
          first_seen_at: server.at,
          last_seen_at: server.at,
        })),
      )
      .onConflict((conflict) =>
        conflict.columns(['owner', 'server_id']).doUpdateSet((update) => ({
          server_name: update.fn.coalesce('excluded.server_name', 'interaction_servers.server_name'),
          last_seen_at: update.ref('excluded.last_seen_at'),
        })),
      )
      .execute();
  }

  return {
    /**
     * Inserts the logs whose fingerprint is not stored yet (the others are left as they are), and records
     * the users and servers those mention for the owner that logged them: their latest names (a server name
     * left out keeps the known one), first and last seen. The fingerprints of the logs it inserted. At most
     * one log per fingerprint.
     */
    async insertNew(logs: readonly NewLogRow[]): Promise<Set<string>> {
      if (logs.length === 0) return new Set();
      if (dialectOf(executor) === 'postgres') return insertNewInOneStatement(db, logs);
      const inserted = await db
        .insertInto('interaction_logs')
        .values(logs.map(({ record }) => logRow(record)))
        .onConflict((conflict) => conflict.column('fingerprint').doNothing())
        .returning('fingerprint')
        .execute();
      const fingerprints = new Set(inserted.map((row) => row.fingerprint));
      const fresh = logs.filter(({ record }) => fingerprints.has(record.fingerprint));
      await sawUsers(
        latestOf(
          fresh.map(({ record, username }) => ({
            owner: record.owner,
            id: record.userId,
            name: username,
            at: record.receivedAt,
          })),
        ),
      );
      await sawServers(
        latestOf(
          fresh.flatMap(({ record, serverName }) =>
            record.serverId === null
              ? []
              : [{ owner: record.owner, id: record.serverId, name: serverName, at: record.receivedAt }],
          ),
        ),
      );
      return fingerprints;
    },

    /** The username the owner's logs last gave the user, if they mentioned them. */
    async usernameOf(owner: bigint, userId: bigint): Promise<string | undefined> {
      const row = await db
        .selectFrom('interaction_users')
        .select('username')
        .where('owner', '=', owner.toString())
        .where('user_id', '=', userId.toString())
        .executeTakeFirst();
      return row?.username;
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

    /** Up to `limit` logs, newest first (received_at, then id), after `position` when given. */
    async list(filter: LogFilter, limit: number, position?: PagePosition): Promise<LogRecord[]> {
      let query = db.selectFrom('interaction_logs').selectAll();
      if (filter.owner !== undefined) query = query.where('owner', '=', filter.owner.toString());
      if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId.toString());
      if (filter.serverId !== undefined) query = query.where('server_id', '=', filter.serverId.toString());
      if (filter.since !== undefined) query = query.where('received_at', '>=', filter.since);
      const rows = await newestFirst(query, { at: 'received_at', id: 'id' }, limit, position).execute();
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

const logRow = (log: LogRecord): InteractionLogsTable => ({
  id: log.id,
  fingerprint: log.fingerprint,
  received_at: log.receivedAt,
  owner: log.owner.toString(),
  user_id: log.userId.toString(),
  server_id: log.serverId?.toString() ?? null,
  document: log.document,
});

/** One sighting per owner and ID: the latest of the batch. */
const latestOf = (sightings: readonly Sighting[]): Sighting[] => [
  ...new Map(sightings.map((sighting) => [`${sighting.owner}:${sighting.id}`, sighting])).values(),
];

/**
 * PostgreSQL: `insertNew` as one statement (one round trip whatever the batch's size), the logs passed as
 * arrays and the sightings taken from the rows it inserted; the latest of a batch is its last in order.
 */
async function insertNewInOneStatement(
  db: Kysely<InteractionsTables>,
  logs: readonly NewLogRow[],
): Promise<Set<string>> {
  const rows = logs.map(({ record, username, serverName }) => ({
    ...logRow(record),
    username,
    server_name: serverName,
  }));
  const { rows: inserted } = await sql<{ fingerprint: string }>`
    with incoming as (
      select * from rows from (
        jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as (
          id text, fingerprint text, received_at bigint, owner text, user_id text, server_id text,
          document text, username text, server_name text
        )
      ) with ordinality as incoming (
        id, fingerprint, received_at, owner, user_id, server_id, document, username, server_name, position
      )
    ),
    inserted as (
      insert into interaction_logs (id, fingerprint, received_at, owner, user_id, server_id, document)
      select id, fingerprint, received_at, owner, user_id, server_id, document from incoming
      on conflict (fingerprint) do nothing
      returning fingerprint
    ),
    fresh as (select incoming.* from incoming join inserted using (fingerprint)),
    users as (
      insert into interaction_users (owner, user_id, username, first_seen_at, last_seen_at)
      select distinct on (owner, user_id) owner, user_id, username, received_at, received_at
      from fresh order by owner, user_id, position desc
      on conflict (owner, user_id) do update
        set username = excluded.username, last_seen_at = excluded.last_seen_at
    ),
    servers as (
      insert into interaction_servers (owner, server_id, server_name, first_seen_at, last_seen_at)
      select distinct on (owner, server_id) owner, server_id, server_name, received_at, received_at
      from fresh where server_id is not null order by owner, server_id, position desc
      on conflict (owner, server_id) do update
        set server_name = coalesce(excluded.server_name, interaction_servers.server_name),
            last_seen_at = excluded.last_seen_at
    )
    select fingerprint from inserted`.execute(db);
  return new Set(inserted.map((row) => row.fingerprint));
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
