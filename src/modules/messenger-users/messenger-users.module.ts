import type { AppModule } from '../../platform/app-module.js';
import type { Executor } from '../../platform/db/transactions.js';
import type { InteractionsService } from '../interactions/interactions.service.js';
import type { PlayersService } from '../players/players.service.js';
import { messengerUsersRoutes } from './messenger-users.routes.js';
import {
  createMessengerUsersService,
  type MessengerUsersService,
  type MessengerUsersSettings,
} from './messenger-users.service.js';

export interface MessengerUsersModuleDeps {
  readonly db: Executor;
  /** Resolves and looks up the players linked (through the cache, single-flight and budget). */
  readonly players: Pick<PlayersService, 'uuidOf' | 'lookup'>;
  /** The Discord usernames each owner's interaction logs saw: for verification, and the users it knows. */
  readonly interactions: Pick<InteractionsService, 'knownUsername'>;
  readonly settings: MessengerUsersSettings;
}

/** Discord users and their linked Minecraft accounts, one view per owner (endpoint 7 and its writes). */
export function createMessengerUsersModule(deps: MessengerUsersModuleDeps): AppModule<MessengerUsersService> {
  const service = createMessengerUsersService(deps);
  return { name: 'messenger-users', service, routes: messengerUsersRoutes(service) };
}
