import { parseArgs } from 'node:util';
import type { TokensService } from '../modules/tokens/tokens.service.js';
import { type Grant, isGrant } from '../platform/auth/grants.js';
import { parseSnowflake } from '../platform/snowflake.js';
import type { CliContext, Command } from './cli-context.js';
import { UsageError } from './usage.js';
import { withDatabase } from './with-database.js';
import { withTokens } from './with-tokens.js';

/** The longest lifetime `token issue --ttl` gives: a year. */
const MAX_TTL_SECONDS = 365 * 86_400;
const MIN_TTL_SECONDS = 60;

/** `token issue ...` and `token revoke ...`. */
export const tokenCommand: Command = async (args, context) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      owner: { type: 'string' },
      grant: { type: 'string', multiple: true },
      ttl: { type: 'string' },
      jti: { type: 'string' },
    },
  });
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument(s): ${extra.join(' ')}`);
  if (action === 'issue') return issue(values, context);
  if (action === 'revoke') return revoke(values.jti, context);
  throw new UsageError(`unknown token action: ${action ?? '(none)'}`);
};

async function issue(
  values: { owner?: string; grant?: string[]; ttl?: string },
  context: CliContext,
): Promise<number> {
  const owner = parseSnowflake(values.owner);
  if (owner === undefined) throw new UsageError('--owner must be a Discord ID: an integer from 1 to 2^64-1');
  // No grant: an identity token, which may only make and follow its owner's developer applications.
  const grants = [...new Set(values.grant ?? [])];
  const unknown = grants.filter((grant) => !isGrant(grant));
  if (unknown.length > 0) throw new UsageError(`unknown grant(s): ${unknown.join(', ')}`);
  const ttlSeconds = values.ttl === undefined ? context.config().auth.tokenTtlSeconds : Number(values.ttl);
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < MIN_TTL_SECONDS || ttlSeconds > MAX_TTL_SECONDS)
    throw new UsageError(`--ttl must be whole seconds from ${MIN_TTL_SECONDS} to ${MAX_TTL_SECONDS}`);
  const issued = await withTokensOf(context, (tokens) =>
    tokens.issue(owner, grants as Grant[], { ttlSeconds }),
  );
  const { io } = context;
  io.stderr(
    grants.length === 0
      ? `issued identity token ${issued.jti} for owner ${owner}: no grants; it may apply for access (POST /admin/developer/applications), follow its owner's applications and manage their keys\n`
      : `issued token ${issued.jti} for owner ${owner} with ${grants.join(' ')}\n`,
  );
  io.stdout(`${JSON.stringify({ token: issued.token, expires_at: issued.expiresAt.toISOString() })}\n`);
  return 0;
}

async function revoke(jti: string | undefined, context: CliContext): Promise<number> {
  if (!jti) throw new UsageError('give the --jti of the token to revoke');
  const revoked = await withTokensOf(context, (tokens) => tokens.revoke(jti));
  context.io.stdout(`${JSON.stringify({ revoked })}\n`);
  return revoked === 0 ? 1 : 0;
}

/** The tokens service over the configured database, as the service itself builds it. */
function withTokensOf<T>(
  { config, io }: CliContext,
  work: (tokens: TokensService) => Promise<T>,
): Promise<T> {
  const settings = config();
  return withDatabase(settings, (db) => withTokens(settings, db, work, (text) => io.stderr(text)));
}
