import type { Config } from './config.js';
import type { Infrastructure } from './infrastructure.js';
import { createApplicationsModule } from './modules/applications/applications.module.js';
import { createHealthModule } from './modules/health/health.module.js';
import { createInteractionsModule } from './modules/interactions/interactions.module.js';
import { createMessengerUsersModule } from './modules/messenger-users/messenger-users.module.js';
import { createOwnerBudgetsModule } from './modules/owner-budgets/owner-budgets.module.js';
import { createOwnerUsageModule } from './modules/owner-usage/owner-usage.module.js';
import { createPingModule } from './modules/ping/ping.module.js';
import { createPlayersModule } from './modules/players/players.module.js';
import { createPortalModule } from './modules/portal/portal.module.js';
import { createProfilesModule } from './modules/profiles/profiles.module.js';
import { createTokensModule } from './modules/tokens/tokens.module.js';
import type { AppModule } from './platform/app-module.js';
import { deriveKey, resolveJwtSecret } from './platform/auth/jwt-secret.js';
import type { Authenticator } from './platform/auth/principal.js';
import type { SessionAuthenticator } from './platform/auth/session.js';
import { executorOf } from './platform/db/transactions.js';
import { createWorkBudget, type WorkBudget } from './platform/limits/work-budget.js';
import type { WayIn } from './way-in.js';

export interface Modules {
  /** Every module, in the order their routes are registered (and the reverse of the order they close). */
  readonly list: readonly AppModule[];
  /** Who checks bearer tokens for the route guards. */
  readonly authenticator: Authenticator;
  /** Who checks the portal's session cookies for the routes that take them (undefined: sign-in is off). */
  readonly sessions: SessionAuthenticator | undefined;
  /** Each owner's budget of work, which the route guards charge. */
  readonly workBudget: WorkBudget;
}

/**
 * The one list of modules. Each is built by its own factory from the shared parts and the services of the
 * modules it needs; adding a module is one line here (after the modules whose services it takes).
 * `wayIn` is how this deployment says where a token comes from (worded once, by the app).
 */
export async function createModules(config: Config, shared: Infrastructure, wayIn: WayIn): Promise<Modules> {
  const { caching, upstreams } = shared;
  const db = executorOf(shared.db);
  const health = createHealthModule({
    probes: shared.probes,
    metrics: shared.metrics,
    settings: config.operations,
    log: shared.log,
  });
  const ownerBudgets = createOwnerBudgetsModule({ db, settings: config.workBudget, log: shared.log });
  const workBudget = createWorkBudget({
    buckets: shared.buckets,
    settings: config.workBudget,
    unitsOf: ownerBudgets.service.unitsOf,
  });
  const ownerUsage = createOwnerUsageModule({
    db,
    meter: shared.usage,
    settings: config.ownerUsage,
    log: shared.log,
  });
  const secret = await resolveJwtSecret(config.auth.jwtSecret, config.dataDir);
  const tokens = createTokensModule({
    db,
    settings: config.auth,
    secret,
    revocations: shared.tokenRevocations,
    wayIn: wayIn.token,
    standings: {
      work: workBudget.standing,
      upstream: upstreams.quota.status,
      usageToday: ownerUsage.service.today,
    },
    log: shared.log,
  });
  const applications = createApplicationsModule({
    db,
    tokens: tokens.service,
    settings: config.applications,
    wayIn: wayIn.token,
  });
  const portal = createPortalModule({
    db,
    verifierKey: deriveKey(secret, 'sign-in-pkce-verifier'),
    tokens: tokens.service,
    settings: config.portal,
    log: shared.log,
  });
  const interactions = createInteractionsModule({
    db,
    fingerprintKey: deriveKey(secret, 'interaction-token-fingerprint'),
    settings: config.interactions,
    log: shared.log,
  });
  const players = createPlayersModule({
    db,
    caching,
    upstreams,
    settings: config.cache,
    history: config.history,
    log: shared.log,
  });
  const profiles = createProfilesModule({
    caching,
    upstreams,
    players: players.service,
    settings: config.cache,
  });
  const messengerUsers = createMessengerUsersModule({
    db,
    players: players.service,
    interactions: interactions.service,
    settings: config.messengerUsers,
  });
  const ping = createPingModule({ db, players: players.service, settings: config.ping, log: shared.log });
  return {
    list: [
      health,
      ownerBudgets,
      ownerUsage,
      tokens,
      applications,
      portal,
      interactions,
      players,
      profiles,
      messengerUsers,
      ping,
    ],
    authenticator: tokens.service,
    sessions: portal.sessions,
    workBudget,
  };
}
