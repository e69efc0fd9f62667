import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import { createOwnerBudgetsRepository, type OwnerBudget } from './owner-budgets.repository.js';

export type { OwnerBudget } from './owner-budgets.repository.js';

export interface OwnerBudgetsSettings {
  /**
   * How long an instance goes on using an owner's budget as it last read it (then reads it again, while
   * requests go on with what it read). An operator's change reaches every instance within this time;
   * meanwhile a request needs no database round trip for it.
   */
  readonly refreshMs: number;
}
/** Owners whose budget an instance keeps at once (the most active). */
const OWNERS_KEPT = 10_000;

export interface OwnerBudgetsService {
  /**
   * The units per window an operator gave the owner; undefined for the default. Never throws: when the
   * database cannot be read, the last value read stands (the default if none was).
   */
  unitsOf(owner: bigint): Promise<number | undefined>;
  find(owner: bigint): Promise<OwnerBudget | undefined>;
  list(): Promise<readonly OwnerBudget[]>;
  set(
    owner: bigint,
    units: number,
    by: { readonly actor: string; readonly reason?: string },
  ): Promise<OwnerBudget>;
  /** Gives the owner the default budget again; whether they had one of their own. */
  clear(owner: bigint): Promise<boolean>;
}

export interface OwnerBudgetsServiceDeps {
  readonly db: Executor;
  readonly settings: OwnerBudgetsSettings;
  readonly log: Pick<Logger, 'warn'>;
  readonly now?: () => number;
}

interface Kept {
  readonly units: number | undefined;
  readonly readAt: number;
}

export function createOwnerBudgetsService({
  db,
  settings,
  log,
  now = Date.now,
}: OwnerBudgetsServiceDeps): OwnerBudgetsService {
  const repository = createOwnerBudgetsRepository(db);
  const kept = new Map<string, Kept>();
  const reading = new Map<string, Promise<void>>();

  const keep = (key: string, units: number | undefined) => {
    kept.delete(key);
    kept.set(key, { units, readAt: now() });
    // A Map keeps insertion order: the first key is the one read longest ago.
    if (kept.size > OWNERS_KEPT) kept.delete(kept.keys().next().value as string);
  };

  /** Reads the owner's budget into `kept`, one read at a time per owner. */
  function read(owner: bigint): Promise<void> {
    const key = owner.toString();
    let pending = reading.get(key);
    if (!pending) {
      pending = repository
        .find(owner)
        .then(
          (budget) => keep(key, budget?.units),
          (error: unknown) => {
            log.warn(
              { err: error, owner: key },
              "could not read an owner's budget; the last one read stands",
            );
            keep(key, kept.get(key)?.units);
          },
        )
        .finally(() => reading.delete(key));
      reading.set(key, pending);
    }
    return pending;
  }

  return {
    async unitsOf(owner) {
      const known = kept.get(owner.toString());
      if (known) {
        if (now() - known.readAt > settings.refreshMs) void read(owner);
        return known.units;
      }
      await read(owner);
      return kept.get(owner.toString())?.units;
    },

    find: (owner) => repository.find(owner),
    list: () => repository.list(),

    async set(owner, units, { actor, reason }) {
      const budget: OwnerBudget = { owner, units, setAt: now(), setBy: actor, reason: reason ?? null };
      await repository.save(budget);
      keep(owner.toString(), units);
      return budget;
    },

    async clear(owner) {
      const had = await repository.remove(owner);
      keep(owner.toString(), undefined);
      return had;
    },
  };
}
