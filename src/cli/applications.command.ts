import { parseArgs } from 'node:util';
import { applicationDetailWire, applicationWire } from '../modules/applications/applications.reply.js';
import { REASON_TEXT } from '../modules/applications/applications.schemas.js';
import {
  APPLICATION_STATES,
  type ApplicationAction,
  type ApplicationState,
  type ApplicationsService,
  createApplicationsService,
} from '../modules/applications/applications.service.js';
import { executorOf } from '../platform/db/transactions.js';
import { serializeJson } from '../platform/json.js';
import { parseSnowflake } from '../platform/snowflake.js';
import { fitsText } from '../platform/text.js';
import type { CliContext, Command } from './cli-context.js';
import { UsageError } from './usage.js';
import { withDatabase } from './with-database.js';
import { withTokens } from './with-tokens.js';

/** The command line acts as an operator: what a reviewer may do, recorded as `operator`. */
const OPERATOR = { kind: 'operator' } as const;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DECISIONS: readonly ApplicationAction[] = ['approve', 'reject', 'revoke'];
const MAX_LIST = 10_000;
const PAGE = 100;

/** `applications list ...` and `applications approve|reject|revoke <id> ...`. */
export const applicationsCommand: Command = async (args, context) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      state: { type: 'string' },
      owner: { type: 'string' },
      limit: { type: 'string' },
      reason: { type: 'string' },
    },
  });
  const [action, ...rest] = positionals;
  if (action === 'list') {
    if (rest.length > 0) throw new UsageError(`unexpected argument(s): ${rest.join(' ')}`);
    if (values.reason !== undefined) throw new UsageError('--reason is for approve, reject and revoke');
    return list(values, context);
  }
  if (action && (DECISIONS as readonly string[]).includes(action)) {
    const [id, ...extra] = rest;
    if (!id || !ID.test(id)) throw new UsageError(`give the id of the application to ${action}`);
    if (extra.length > 0) throw new UsageError(`unexpected argument(s): ${extra.join(' ')}`);
    if (values.state !== undefined || values.owner !== undefined || values.limit !== undefined)
      throw new UsageError('--state, --owner and --limit are for list');
    return decide(action as ApplicationAction, id, reasonOf(values.reason), context);
  }
  throw new UsageError(`unknown applications action: ${action ?? '(none)'}`);
};

async function list(
  values: { state?: string; owner?: string; limit?: string },
  context: CliContext,
): Promise<number> {
  const state = values.state;
  if (state !== undefined && !(APPLICATION_STATES as readonly string[]).includes(state))
    throw new UsageError(`--state must be one of ${APPLICATION_STATES.join(', ')}`);
  const owner = values.owner === undefined ? undefined : parseSnowflake(values.owner);
  if (values.owner !== undefined && owner === undefined)
    throw new UsageError('--owner must be a Discord ID: an integer from 1 to 2^64-1');
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST)
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIST}`);
  const filter = { state: state as ApplicationState | undefined, owner };
  const printed = await withApplications(context, async (applications) => {
    let cursor: string | undefined;
    let count = 0;
    do {
      const page = await applications.list(OPERATOR, {
        ...filter,
        limit: Math.min(PAGE, limit - count),
        cursor,
      });
      for (const application of page.applications)
        context.io.stdout(`${serializeJson(applicationWire(application))}\n`);
      count += page.applications.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined && count < limit);
    return count;
  });
  context.io.stderr(`${printed} application(s), newest first\n`);
  return 0;
}

async function decide(
  action: ApplicationAction,
  id: string,
  reason: string | undefined,
  context: CliContext,
): Promise<number> {
  const application = await withApplications(context, (applications) =>
    applications.transition(OPERATOR, id, action, reason),
  );
  context.io.stdout(`${serializeJson(applicationDetailWire(application))}\n`);
  context.io.stderr(
    `application ${id} is ${application.state}` +
      (action === 'approve'
        ? `; its owner (${application.owner}) collects its key in the developer portal, or at POST /admin/developer/applications/${id}/key\n`
        : '\n'),
  );
  return 0;
}

/** The reason as the HTTP routes take it (the same rule: `Text` of platform/text.ts). */
function reasonOf(reason: string | undefined): string | undefined {
  if (reason === undefined || fitsText(reason, REASON_TEXT)) return reason;
  throw new UsageError(
    `--reason must be at most ${REASON_TEXT.maxLength} characters, without control characters`,
  );
}

/** The applications service over the configured database, as the service itself builds it. */
function withApplications<T>(
  { config, io }: CliContext,
  work: (applications: ApplicationsService) => Promise<T>,
): Promise<T> {
  const settings = config();
  return withDatabase(settings, (db) =>
    withTokens(
      settings,
      db,
      (tokens) =>
        work(createApplicationsService({ db: executorOf(db), tokens, settings: settings.applications })),
      (text) => io.stderr(text),
    ),
  );
}
