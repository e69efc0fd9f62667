import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import type { InteractionsService } from '../interactions/interactions.service.js';
import type { PlayerLookup, PlayersService } from '../players/players.service.js';
import {
  createMessengerUsersRepository,
  type LinkedAccount,
  type UserRecord,
} from './messenger-users.repository.js';

export type { LinkedAccount } from './messenger-users.repository.js';

export const DEFAULT_LOCALE = 'en-US';

/** A user as endpoint 7 shows it: the profile and the linked accounts, the primary first. */
export interface MessengerUserProfile {
  readonly snowflake: bigint;
  readonly locale: string;
  readonly accounts: readonly LinkedAccount[];
}

export interface LinkRequest {
  /** A Minecraft UUID (dashed or not) or username. */
  readonly player: string;
  /** Make it the primary account (the first link always is). */
  readonly primary?: boolean;
  /** Link only if the player's Hypixel profile names the user's Discord username. */
  readonly verify?: boolean;
  /** The user's Discord username, taken for verification when the service does not know the user yet. */
  readonly username?: string;
}

export interface MessengerUsersService {
  /** The user and their accounts; 404 when unknown. */
  profile(snowflake: bigint): Promise<MessengerUserProfile>;
  /** Sets the user's locale (BCP 47, canonicalised; 400 when not one), creating the user if new. */
  setLocale(snowflake: bigint, locale: string): Promise<MessengerUserProfile>;
  /**
   * Links a Minecraft account to the user (creating the user if new), resolved and, when asked, verified
   * through the players service for `caller` (charged for the upstream calls). Linking an account the
   * user has already is no change (or makes it primary when asked). 409 when another user has it, when
   * the user has the most accounts allowed, or when verification fails; upstream trouble throws an
   * UpstreamFailure and links nothing.
   */
  link(snowflake: bigint, request: LinkRequest, caller: string): Promise<MessengerUserProfile>;
  /** Unlinks the account (the oldest remaining becomes primary if it was); 404 when not linked to the user. */
  unlink(snowflake: bigint, uuid: string): Promise<MessengerUserProfile>;
  /** Makes the user's account their primary; 404 when not linked to the user. */
  makePrimary(snowflake: bigint, uuid: string): Promise<MessengerUserProfile>;
}

export interface MessengerUsersSettings {
  /** The most Minecraft accounts one user may link. */
  readonly maxLinkedAccounts: number;
}

export interface MessengerUsersServiceDeps {
  readonly db: Executor;
  readonly players: Pick<PlayersService, 'resolve' | 'lookup'>;
  readonly interactions: Pick<InteractionsService, 'knownUsername'>;
  readonly settings: MessengerUsersSettings;
  readonly now?: () => number;
}

export function createMessengerUsersService({
  db,
  players,
  interactions,
  settings,
  now = Date.now,
}: MessengerUsersServiceDeps): MessengerUsersService {
  const repository = createMessengerUsersRepository(db);

  async function profileOf(executor: Executor, snowflake: bigint): Promise<MessengerUserProfile> {
    const users = createMessengerUsersRepository(executor);
    const user = await users.findUser(snowflake);
    if (!user) throw notFound(snowflake);
    return { snowflake, locale: user.locale, accounts: await users.accountsOf(snowflake) };
  }

  /** Runs `change` on the user in one transaction, the user's row locked first; the profile after it. */
  function changeUser(
    snowflake: bigint,
    change: (users: ReturnType<typeof createMessengerUsersRepository>) => Promise<void>,
    create?: UserRecord,
  ): Promise<MessengerUserProfile> {
    return inTransaction(db, async (transaction) => {
      const users = createMessengerUsersRepository(transaction);
      const at = now();
      if (create) await users.createUser(create, at);
      if (!(await users.touchUser(snowflake, at))) throw notFound(snowflake);
      await change(users);
      return profileOf(transaction, snowflake);
    });
  }

  /** The Discord username to verify against: the logs' latest, else the one the user was created with. */
  async function usernameFor(snowflake: bigint, given: string | undefined): Promise<string> {
    const known =
      (await interactions.knownUsername(snowflake)) ?? (await repository.findUser(snowflake))?.username;
    const username = known ?? given;
    if (username === undefined || username === null)
      throw AppError.of(ErrorKinds.USERNAME_UNKNOWN, {
        developerReason:
          'no interaction log names this user and the request gives no username: send `username` with the link',
      });
    return username;
  }

  async function verify(snowflake: bigint, uuid: string, given: string | undefined, caller: string) {
    const username = await usernameFor(snowflake, given);
    const problem = verificationProblem(await players.lookup(uuid, caller), username);
    if (problem)
      throw AppError.of(ErrorKinds.LINK_NOT_VERIFIED, { reason: problem, developerReason: problem });
  }

  return {
    profile: (snowflake) => profileOf(db, snowflake),

    setLocale(snowflake, locale) {
      const canonical = canonicalLocale(locale);
      return changeUser(snowflake, (users) => users.setLocale(snowflake, canonical, now()), {
        snowflake,
        locale: canonical,
        username: null,
      });
    },

    async link(snowflake, request, caller) {
      const resolved = await players.resolve(request.player, caller);
      if (!('uuid' in resolved)) throw AppError.of(ErrorKinds.PLAYER_NOT_FOUND);
      const { uuid } = resolved;
      if (request.verify) await verify(snowflake, uuid, request.username, caller);
      const create = { snowflake, locale: DEFAULT_LOCALE, username: request.username ?? null };
      return changeUser(
        snowflake,
        async (users) => {
          const holder = await users.holderOf(uuid);
          if (holder !== undefined && holder !== snowflake) throw linkedElsewhere();
          const accounts = await users.accountsOf(snowflake);
          if (holder === undefined) {
            if (accounts.length >= settings.maxLinkedAccounts)
              throw AppError.of(ErrorKinds.TOO_MANY_LINKED_ACCOUNTS, {
                developerReason: `a user may link at most ${settings.maxLinkedAccounts} accounts (MESSENGER_MAX_LINKED_ACCOUNTS); unlink one first`,
              });
            const primary = accounts.length === 0 || request.primary === true;
            if (primary) await users.clearPrimary(snowflake);
            // Another user's concurrent link of the account won if this links nothing.
            if (!(await users.link({ uuid, snowflake, primary, linkedAt: now() }))) throw linkedElsewhere();
          } else if (request.primary) {
            await users.clearPrimary(snowflake);
            await users.makePrimary(snowflake, uuid);
          }
        },
        create,
      );
    },

    unlink(snowflake, uuid) {
      return changeUser(snowflake, async (users) => {
        const unlinked = await users.unlink(snowflake, uuid);
        if (!unlinked) throw notLinked();
        if (!unlinked.primary) return;
        const [oldest] = await users.accountsOf(snowflake);
        if (oldest) await users.makePrimary(snowflake, oldest.uuid);
      });
    },

    makePrimary(snowflake, uuid) {
      return changeUser(snowflake, async (users) => {
        if ((await users.holderOf(uuid)) !== snowflake) throw notLinked();
        await users.clearPrimary(snowflake);
        await users.makePrimary(snowflake, uuid);
      });
    },
  };
}

/**
 * A Discord username as compared: trimmed, and only A-Z lowered (Discord usernames are ASCII; Unicode case
 * rules would make the Kelvin sign an uppercase K).
 */
const comparable = (name: string): string => name.trim().replace(/[A-Z]/g, (letter) => letter.toLowerCase());

/** Why the player's Hypixel profile does not vouch for the username (case-insensitive), if it does not. */
function verificationProblem(found: PlayerLookup, username: string): string | undefined {
  if (found.kind !== 'found')
    return 'This player has never joined Hypixel, so their profile links no Discord account.';
  const link = found.player.discordLink();
  if (link === undefined || link.trim() === '')
    return "The player's Hypixel profile has no Discord account linked (socialMedia.links.DISCORD is missing).";
  if (comparable(link) !== comparable(username))
    return "The Discord account linked on the player's Hypixel profile is a different one than this user's.";
  return undefined;
}

/** BCP 47, canonical (`en-us` -> `en-US`); 400 when the text is not a language tag naming a language. */
function canonicalLocale(locale: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(locale);
    // `und` (undetermined) names no language: `und-x-private` is a private-use tag in disguise.
    const language = canonical && new Intl.Locale(canonical).language;
    if (canonical && language && language !== 'und') return canonical;
  } catch {
    // RangeError: not a well-formed tag.
  }
  throw new AppError(
    [
      {
        kind: ErrorKinds.INVALID_FIELD,
        reason: 'locale must be a BCP 47 language tag, such as en-US',
        developerReason: 'body/locale must be a BCP 47 language tag (RFC 5646), such as en-US or pt-BR',
      },
    ],
    { cause: 'Invalid request body' },
  );
}

const notFound = (snowflake: bigint) =>
  AppError.of(ErrorKinds.MESSENGER_USER_NOT_FOUND, {
    developerReason: `no user ${snowflake} is known: PUT its profile or link an account to create it`,
  });
const notLinked = () => AppError.of(ErrorKinds.ACCOUNT_NOT_LINKED);
const linkedElsewhere = () =>
  AppError.of(ErrorKinds.ACCOUNT_LINKED_ELSEWHERE, {
    developerReason: 'the account is linked to another user; that user must unlink it first',
  });
