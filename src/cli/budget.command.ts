import { parseArgs } from 'node:util';
import {
  createOwnerBudgetsService,
  type OwnerBudget,
  type OwnerBudgetsService,
} from '../modules/owner-budgets/owner-budgets.service.js';
import { executorOf } from '../platform/db/transactions.js';
import { parseSnowflake } from '../platform/snowflake.js';
import { fitsText } from '../platform/text.js';
import type { CliContext, Command } from './cli-context.js';
import { UsageError } from './usage.js';
import { withDatabase } from './with-database.js';

/** The most units per window an operator may give an owner (WORK_BUDGET_UNITS' own bound). */
const MAX_UNITS = 1_000_000_000;
const REASON = { maxLength: 500, multiline: true } as const;

/** `budget set|clear|show ...`: an owner's budget of the service's work, in place of WORK_BUDGET_UNITS. */
export const budgetCommand: Command = async (args, context) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      owner: { type: 'string' },
      units: { type: 'string' },
      reason: { type: 'string' },
    },
  });
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument(s): ${extra.join(' ')}`);
  const owner = values.owner === undefined ? undefined : parseSnowflake(values.owner);
  if (values.owner !== undefined && owner === undefined)
    throw new UsageError('--owner must be a Discord ID: an integer from 1 to 2^64-1');
  if (action === 'show') {
    if (values.units !== undefined || values.reason !== undefined)
      throw new UsageError('--units and --reason are for set');
    return show(owner, context);
  }
  if (owner === undefined) throw new UsageError(`give the --owner whose budget to ${action ?? 'change'}`);
  if (action === 'set') return set(owner, values, context);
  if (action === 'clear') {
    if (values.units !== undefined || values.reason !== undefined)
      throw new UsageError('--units and --reason are for set');
    const had = await withBudgets(context, (budgets) => budgets.clear(owner));
    context.io.stdout(`${JSON.stringify({ owner: owner.toString(), cleared: had })}\n`);
    return had ? 0 : 1;
  }
  throw new UsageError(`unknown budget action: ${action ?? '(none)'}`);
};

async function set(
  owner: bigint,
  values: { units?: string; reason?: string },
  context: CliContext,
): Promise<number> {
  const units = Number(values.units);
  if (values.units === undefined || !/^[0-9]+$/.test(values.units) || units < 1 || units > MAX_UNITS)
    throw new UsageError(`--units must be a whole number of cost units per window, from 1 to ${MAX_UNITS}`);
  if (values.reason !== undefined && !fitsText(values.reason, REASON))
    throw new UsageError(
      `--reason must be at most ${REASON.maxLength} characters, without control characters`,
    );
  const budget = await withBudgets(context, (budgets) =>
    budgets.set(owner, units, { actor: 'operator', ...(values.reason ? { reason: values.reason } : {}) }),
  );
  context.io.stdout(`${JSON.stringify(wire(budget, context))}\n`);
  return 0;
}

async function show(owner: bigint | undefined, context: CliContext): Promise<number> {
  const budgets = await withBudgets(context, async (service) =>
    owner === undefined ? service.list() : [await service.find(owner)],
  );
  if (owner !== undefined && budgets[0] === undefined) {
    const { workBudget } = context.config();
    context.io.stdout(
      `${JSON.stringify({ owner: owner.toString(), units: workBudget.units, window_seconds: workBudget.windowSeconds, default: true })}\n`,
    );
    return 0;
  }
  for (const budget of budgets) if (budget) context.io.stdout(`${JSON.stringify(wire(budget, context))}\n`);
  return 0;
}

const wire = (budget: OwnerBudget, context: CliContext) => ({
  owner: budget.owner.toString(),
  units: budget.units,
  window_seconds: context.config().workBudget.windowSeconds,
  default: false,
  set_at: new Date(budget.setAt).toISOString(),
  set_by: budget.setBy,
  reason: budget.reason,
});

function withBudgets<T>(context: CliContext, work: (budgets: OwnerBudgetsService) => Promise<T>): Promise<T> {
  return withDatabase(context.config(), (db) =>
    work(
      createOwnerBudgetsService({
        db: executorOf(db),
        settings: context.config().workBudget,
        log: { warn: () => undefined },
      }),
    ),
  );
}
