import type { TestContext } from 'node:test';
import { type Kysely, sql } from 'kysely';
import type { Backend } from '../../helpers/backends.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { bearer, issueToken } from '../../helpers/tokens.js';

/** The interaction-log suites' shared parts: bodies, the app with a bot's and its owner's reader tokens, faults. */
export const PATH = '/messenger/logging/interaction';
export const BOT_OWNER = 987654321098765432n;
export const USER = '18446744073709551615';
export const SERVER = '1234567890123456789';

let sequence = 0;
/** A distinct interaction token, shaped like Discord's. */
export const newToken = () =>
  `aW50ZXJhY3Rpb246${Date.now()}${++sequence}.SECRET-${Math.random().toString(36).slice(2)}`;

/** The log of a bot interaction as raw JSON, so IDs can be sent as integers beyond 2^53. */
export function logText({
  token = newToken(),
  user = USER,
  server = SERVER,
  username = 'notch',
  idsAs = 'integer',
  options = '{"player":"Notch"}',
}: {
  token?: string;
  user?: string;
  server?: string | null;
  username?: string;
  idsAs?: 'integer' | 'string';
  options?: string;
} = {}): string {
  const id = (digits: string) => (idsAs === 'integer' ? digits : `"${digits}"`);
  const serverPart = server === null ? '' : `,"server_id":${id(server)}`;
  const serverObject = server === null ? '' : `,"server":{"server_id":${id(server)},"server_name":"Guild"}`;
  return (
    `{"interaction":{"interaction_name":"stats","interaction_token":"${token}","interaction_type":"APPLICATION_COMMAND",` +
    `"options":${options}${serverPart},"user_id":${id(user)}}${serverObject},` +
    `"user":{"user_id":${id(user)},"username":"${username}"}}`
  );
}

export async function setup(t: TestContext, backend: Backend, env: Record<string, string> = {}) {
  const test = await buildTestApp(t, { backend, env });
  const bot = await issueToken(test.app, test.config, { owner: BOT_OWNER, grants: ['messenger:log'] });
  // The bot's owner reading its logs: a reader sees its own owner's logs only.
  const reader = await issueToken(test.app, test.config, { owner: BOT_OWNER, grants: ['messenger:read'] });
  const post = (text: string, token = bot) =>
    test.app.inject({
      method: 'POST',
      url: PATH,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: text,
    });
  const list = (query = '', token = reader) =>
    test.app.inject({ method: 'GET', url: `${PATH}${query ? `?${query}` : ''}`, headers: bearer(token) });
  const count = async (table: string) => {
    const { rows } = await sql<{ count: number }>`select count(*) as count from ${sql.table(table)}`.execute(
      test.app.db,
    );
    return Number(rows[0]?.count);
  };
  return { ...test, bot, reader, post, list, count };
}

/** Every row of every table of the service's database, as text. */
export async function everyRow(db: Kysely<object>, backend: Backend): Promise<string> {
  const tables =
    backend.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)).rows
      : (
          await sql<{ name: string }>`select table_name as name from information_schema.tables
            where table_schema = current_schema()`.execute(db)
        ).rows;
  let text = '';
  for (const { name } of tables) {
    const { rows } = await sql`select * from ${sql.table(name)}`.execute(db);
    text += JSON.stringify(rows, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
  }
  return text;
}

export function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level++) value = { inner: value };
  return value;
}

export async function failInserts(db: Kysely<object>, backend: Backend, table: string): Promise<void> {
  if (backend.dialect === 'sqlite') {
    await sql
      .raw(`create trigger fail_insert before insert on ${table} begin select raise(abort, 'refused'); end`)
      .execute(db);
    return;
  }
  await sql
    .raw(
      `create or replace function fail_insert() returns trigger as $$ begin raise exception 'refused'; end $$ language plpgsql;
       create trigger fail_insert before insert on ${table} for each row execute function fail_insert()`,
    )
    .execute(db);
}
