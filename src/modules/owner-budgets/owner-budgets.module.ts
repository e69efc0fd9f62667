import type { AppModule } from '../../platform/app-module.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { Logger } from '../../platform/logger.js';
import {
  createOwnerBudgetsService,
  type OwnerBudgetsService,
  type OwnerBudgetsSettings,
} from './owner-budgets.service.js';

export interface OwnerBudgetsModuleDeps {
  readonly db: Executor;
  readonly settings: OwnerBudgetsSettings;
  readonly log: Logger;
}

/**
 * Budgets of work that operators give single owners (the command line's `budget` command), in place of
 * WORK_BUDGET_UNITS; the work budget (platform/limits/work-budget.ts) asks it for each owner's. No routes.
 */
export function createOwnerBudgetsModule(deps: OwnerBudgetsModuleDeps): AppModule<OwnerBudgetsService> {
  return { name: 'owner-budgets', service: createOwnerBudgetsService(deps) };
}
