import { applications } from './modules/applications/migrations/0003-applications.js';
import { applicationKeys } from './modules/applications/migrations/0015-application-keys.js';
import { interactions } from './modules/interactions/migrations/0004-interactions.js';
import { interactionOwners } from './modules/interactions/migrations/0009-interaction-owners.js';
import { messengerUsers } from './modules/messenger-users/migrations/0006-messenger-users.js';
import { messengerUserOwners } from './modules/messenger-users/migrations/0010-messenger-user-owners.js';
import { ownerBudgets } from './modules/owner-budgets/migrations/0012-owner-budgets.js';
import { ownerUsage } from './modules/owner-usage/migrations/0017-owner-usage.js';
import { ping } from './modules/ping/migrations/0007-ping.js';
import { pingOwners } from './modules/ping/migrations/0011-ping-owners.js';
import { pingRevisions } from './modules/ping/migrations/0018-ping-revisions.js';
import { players } from './modules/players/migrations/0002-players.js';
import { playerFetchers } from './modules/players/migrations/0013-player-fetchers.js';
import { playerHistory } from './modules/players/migrations/0019-player-history.js';
import { portalSessions } from './modules/portal/migrations/0016-portal-sessions.js';
import { tokens } from './modules/tokens/migrations/0001-tokens.js';
import { tokenChanges } from './modules/tokens/migrations/0008-token-changes.js';
import { tokenKeys } from './modules/tokens/migrations/0014-token-keys.js';
import { tokenChainEnds } from './modules/tokens/migrations/0020-token-chain-ends.js';
import { leases } from './platform/db/migrations/0005-leases.js';
import type { Migrations } from './platform/db/migrator.js';

/**
 * Every migration, by name; names sort in the order they run (`0001-...`), whichever module they belong
 * to. Forward only: a released migration is never edited or renamed, a change is a new migration. Each
 * module keeps its migrations in its own `migrations/` folder; this is the one list that orders them.
 */
export const migrations: Migrations = {
  '0001-tokens': tokens,
  '0002-players': players,
  '0003-applications': applications,
  '0004-interactions': interactions,
  '0005-leases': leases,
  '0006-messenger-users': messengerUsers,
  '0007-ping': ping,
  '0008-token-changes': tokenChanges,
  '0009-interaction-owners': interactionOwners,
  '0010-messenger-user-owners': messengerUserOwners,
  '0011-ping-owners': pingOwners,
  '0012-owner-budgets': ownerBudgets,
  '0013-player-fetchers': playerFetchers,
  '0014-token-keys': tokenKeys,
  '0015-application-keys': applicationKeys,
  '0016-portal-sessions': portalSessions,
  '0017-owner-usage': ownerUsage,
  '0018-ping-revisions': pingRevisions,
  '0019-player-history': playerHistory,
  '0020-token-chain-ends': tokenChainEnds,
};
