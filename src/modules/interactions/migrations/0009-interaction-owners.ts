import { type Kysely, type Migration, type RawBuilder, SqliteAdapter, sql } from 'kysely';

/**
 * The owners who may have written rows that do not say who wrote them: every owner ever issued a token
 * carrying `grant` (`tokens.grants` is space-separated), or, when there is none, owner `0`, which no token
 * has: such rows are kept, and only an auditor reads them (docs/decisions.md).
 */
const ownersEverGranted = (grant: string) => {
  const holders = sql`select 1 from tokens where ' ' || grants || ' ' like ${`% ${grant} %`}`;
  return sql`
    select distinct owner from tokens where ' ' || grants || ' ' like ${`% ${grant} %`}
    union
    select cast('0' as text) as owner where not exists (${holders})`;
};

/**
 * A stored document as PostgreSQL's `jsonb`, which refuses two escapes the service writes where a client's
 * free-form `options` hold them: `\u0000` and a lone surrogate (`\ud800`). Names never hold either (they are
 * Text, which refuses control characters and lone surrogates; the writer writes every other character
 * beyond ASCII as it is, so a surrogate's escape is always a lone one), so each such escape becomes
 * `\ufffd` before the cast. An escaped backslash (`\\`) is set aside first, so that `\\u0000` (a
 * backslash, then "u0000") is left as it is: every backslash left begins an escape. Raw control characters
 * are never in JSON text, so `chr(1)` marks the set-aside pairs.
 */
const readableByPostgres = (document: RawBuilder<unknown>) => sql`(replace(
    regexp_replace(replace(${document}, ${'\\\\'}, chr(1)), ${'\\\\u(0000|[dD][89abAB][0-9a-fA-F]{2})'}, ${'\\\\ufffd'}, 'g'),
    chr(1), ${'\\\\'}
  )::jsonb)`;

/**
 * Interaction users and servers become the logging owner's: one row per (owner, id), so that one owner
 * logging a user or a server under another name changes nothing another owner sees. Rebuilt from the logs
 * that remain, each owner's from its own: the username from its latest log of the user, a server's name from
 * its latest log naming one, first and last seen from its logs' times. Every other owner that held
 * `messenger:log` (who alone could have logged a user; the old table does not say which did) keeps the
 * user or server as the shared table had it, as it could read it before: nothing an owner saw is lost, and
 * none sees what it could not see before. The logs
 * gain the indexes that read them per owner (the per-user and per-server ones now start with the owner).
 * SQLite cannot change a primary key: each table is made anew, filled, and takes the old one's name.
 */
export const interactionOwners: Migration = {
  async up(db: Kysely<unknown>) {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    // Each owner's logs newest first, whole or by user or by server; the rebuild below reads them so.
    const newest = {
      interaction_logs_owner_newest: ['owner', 'received_at', 'id'],
      interaction_logs_owner_user_newest: ['owner', 'user_id', 'received_at', 'id'],
      interaction_logs_owner_server_newest: ['owner', 'server_id', 'received_at', 'id'],
    };
    for (const [name, columns] of Object.entries(newest))
      await db.schema.createIndex(name).on('interaction_logs').columns(columns).execute();

    // The documents are the service's own JSON, with `user.username` and, when given, `server.server_name`.
    const username = sqlite
      ? sql`json_extract(latest.document, '$.user.username')`
      : sql`${readableByPostgres(sql`latest.document`)} #>> '{user,username}'`;
    const serverName = sqlite
      ? sql`json_extract(latest.document, '$.server.server_name')`
      : sql`${readableByPostgres(sql`latest.document`)} #>> '{server,server_name}'`;
    const loggers = ownersEverGranted('messenger:log');

    await db.schema
      .createTable('interaction_users_next')
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('user_id', 'text', (column) => column.notNull())
      .addColumn('username', 'text', (column) => column.notNull())
      .addColumn('first_seen_at', 'bigint', (column) => column.notNull())
      .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('interaction_users_key', ['owner', 'user_id'])
      .execute();
    await sql`
      insert into interaction_users_next (owner, user_id, username, first_seen_at, last_seen_at)
      select logs.owner, logs.user_id,
        coalesce((
          select ${username} from interaction_logs latest
          where latest.owner = logs.owner and latest.user_id = logs.user_id
          order by latest.received_at desc, latest.id desc limit 1
        ), ''),
        min(logs.received_at), max(logs.received_at)
      from interaction_logs logs
      group by logs.owner, logs.user_id`.execute(db);
    await sql`
      insert into interaction_users_next (owner, user_id, username, first_seen_at, last_seen_at)
      select loggers.owner, users.user_id, users.username, users.first_seen_at, users.last_seen_at
      from interaction_users users cross join (${loggers}) loggers
      where not exists (
        select 1 from interaction_logs logs where logs.user_id = users.user_id and logs.owner = loggers.owner
      )`.execute(db);
    await db.schema.dropTable('interaction_users').execute();
    await db.schema.alterTable('interaction_users_next').renameTo('interaction_users').execute();

    await db.schema
      .createTable('interaction_servers_next')
      .addColumn('owner', 'text', (column) => column.notNull())
      .addColumn('server_id', 'text', (column) => column.notNull())
      .addColumn('server_name', 'text')
      .addColumn('first_seen_at', 'bigint', (column) => column.notNull())
      .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('interaction_servers_key', ['owner', 'server_id'])
      .execute();
    await sql`
      insert into interaction_servers_next (owner, server_id, server_name, first_seen_at, last_seen_at)
      select logs.owner, logs.server_id,
        (
          select ${serverName} from interaction_logs latest
          where latest.owner = logs.owner and latest.server_id = logs.server_id
            and ${serverName} is not null
          order by latest.received_at desc, latest.id desc limit 1
        ),
        min(logs.received_at), max(logs.received_at)
      from interaction_logs logs
      where logs.server_id is not null
      group by logs.owner, logs.server_id`.execute(db);
    await sql`
      insert into interaction_servers_next (owner, server_id, server_name, first_seen_at, last_seen_at)
      select loggers.owner, servers.server_id, servers.server_name, servers.first_seen_at, servers.last_seen_at
      from interaction_servers servers cross join (${loggers}) loggers
      where not exists (
        select 1 from interaction_logs logs where logs.server_id = servers.server_id and logs.owner = loggers.owner
      )`.execute(db);
    await db.schema.dropTable('interaction_servers').execute();
    await db.schema.alterTable('interaction_servers_next').renameTo('interaction_servers').execute();

    // Every reader but an auditor reads one owner's logs: the per-owner indexes above serve them.
    await db.schema.dropIndex('interaction_logs_user_newest').execute();
    await db.schema.dropIndex('interaction_logs_server_newest').execute();
  },
};
