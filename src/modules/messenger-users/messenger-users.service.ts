import { type Executor, inTransaction } from '../../platform/db/transactions.js';
import { AppError, ErrorKinds, InputError } from '../../platform/errors.js';
import {
  ensureMayRead,
  type InteractionsService,
  type Reader,
} from '../interactions/interactions.service.js';
import type { PlayerLookup, PlayersService } from '../players/players.service.js';
import {
  createMessengerUsersRepository,
  type LinkedAccount,
  type MessengerUsersRepository,
  type UserRecord,
} from './messenger-users.repository.js';

export { AUDIT_GRANT, type Reader } from '../interactions/interactions.service.js';
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
  /**
   * The user and their accounts in one owner's view: the reader's own, or, for an auditor, the one `owner`
   * names (403 for another reader naming another owner). A user the owner logged (interaction logs) but never
   * wrote is known, with the default locale and no accounts; 404 when the owner knows no such user.
   */
  profile(reader: Reader, snowflake: bigint, owner?: bigint): Promise<MessengerUserProfile>;
  /** Sets the user's locale (BCP 47, canonicalised; an InputError on `locale` when not one), creating the user if new. */
  setLocale(owner: bigint, snowflake: bigint, locale: string): Promise<MessengerUserProfile>;
  /**
   * Links a Minecraft account to the user (creating the user if new), resolved and, when asked, verified
   * through the players service for `owner` (charged for the upstream calls). Linking an account the
   * user has already is no change (or makes it primary when asked). 409 when another user of the owner's
   * view has it, when the user has the most accounts allowed, or when verification fails; upstream trouble
   * throws an UpstreamFailure and links nothing.
   */
  link(owner: bigint, snowflake: bigint, request: LinkRequest): Promise<MessengerUserProfile>;
  /** Unlinks the account (the oldest remaining becomes primary if it was); 404 when not linked to the user. */
  unlink(owner: bigint, snowflake: bigint, uuid: string): Promise<MessengerUserProfile>;
  /** Makes the user's account their primary; 404 when not linked to the user. */
  makePrimary(owner: bigint, snowflake: bigint, uuid: string): Promise<MessengerUserProfile>;
}

export interface MessengerUsersSettings {
  /** The most Minecraft accounts one user may link. */
  readonly maxLinkedAccounts: number;
}

export interface MessengerUsersServiceDeps {
  readonly db: Executor;
  readonly players: Pick<PlayersService, 'uuidOf' | 'lookup'>;
  /** The usernames each owner's logs gave its users: for verification, and the users an owner knows. */
  readonly interactions: Pick<InteractionsService, 'knownUsername'>;
  readonly settings: MessengerUsersSettings;
  readonly now?: () => number;
}

/**
 * Each owner's bot has its own view of the chat-platform users: every read and write is in one owner's view
 * (its repository is made for that owner), and one owner's writes change nothing another owner sees.
 */
export function createMessengerUsersService({
  db,
  players,
  interactions,
  settings,
  now = Date.now,
}: MessengerUsersServiceDeps): MessengerUsersService {
  /** Whether the owner logged the user: then the user is known in its view, even before any write. */
  const logged = async (owner: bigint, snowflake: bigint) =>
    (await interactions.knownUsername(owner, snowflake)) !== undefined;

  async function profileOf(
    users: MessengerUsersRepository,
    snowflake: bigint,
  ): Promise<MessengerUserProfile | undefined> {
    const user = await users.findUser(snowflake);
    return user && { snowflake, locale: user.locale, accounts: await users.accountsOf(snowflake) };
  }

  /**
   * Runs `change` on the owner's user in one transaction, the user's row locked first; the profile after it.
   * A user the owner only logged has no row to change: it has no accounts, so an account named is not linked.
   */
  async function changeUser(
    owner: bigint,
    snowflake: bigint,
    change: (users: MessengerUsersRepository) => Promise<void>,
    create?: UserRecord,
  ): Promise<MessengerUserProfile> {
    const changed = await inTransaction(db, async (transaction) => {
      const users = createMessengerUsersRepository(transaction, owner);
      const at = now();
      if (create) await users.createUser(create, at);
      if (!(await users.touchUser(snowflake, at))) return undefined;
      await change(users);
      return profileOf(users, snowflake);
    });
    if (changed) return changed;
    // Asked after the transaction: on SQLite a read of the root database inside it would wait for it.
    throw (await logged(owner, snowflake)) ? notLinked() : notFound(snowflake);
  }

  /**
   * The Discord username to verify against: the owner's logs' latest, else the one the owner gave when it
   * created the user, else the request's. Never another owner's.
   */
  async function usernameFor(owner: bigint, snowflake: bigint, given: string | undefined): Promise<string> {
    const known =
      (await interactions.knownUsername(owner, snowflake)) ??
      (await createMessengerUsersRepository(db, owner).findUser(snowflake))?.username;
    const username = known ?? given;
    if (username === undefined || username === null)
      throw AppError.of(ErrorKinds.USERNAME_UNKNOWN, {
        developerReason:
          'no interaction log of yours names this user and the request gives no username: send `username` with the link',
      });
    return username;
  }

  async function verify(owner: bigint, snowflake: bigint, uuid: string, given: string | undefined) {
    const username = await usernameFor(owner, snowflake, given);
    const problem = verificationProblem(await players.lookup(uuid, owner), username);
    if (problem)
      throw AppError.of(ErrorKinds.LINK_NOT_VERIFIED, { reason: problem, developerReason: problem });
  }

  return {
    async profile(reader, snowflake, asked) {
      ensureMayRead(reader, asked);
      const owner = asked ?? reader.owner;
      const found = await profileOf(createMessengerUsersRepository(db, owner), snowflake);
      if (found) return found;
      if (await logged(owner, snowflake)) return { snowflake, locale: DEFAULT_LOCALE, accounts: [] };
      throw notFound(snowflake);
    },

    async setLocale(owner, snowflake, locale) {
      const canonical = canonicalLocale(locale);
      return changeUser(owner, snowflake, (users) => users.setLocale(snowflake, canonical, now()), {
        snowflake,
        locale: canonical,
        username: null,
      });
    },

    async link(owner, snowflake, request) {
      const uuid = await players.uuidOf(request.player, owner);
      if (request.verify) await verify(owner, snowflake, uuid, request.username);
      const create = { snowflake, locale: DEFAULT_LOCALE, username: request.username ?? null };
      return changeUser(
        owner,
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

    unlink(owner, snowflake, uuid) {
      return changeUser(owner, snowflake, async (users) => {
        const unlinked = await users.unlink(snowflake, uuid);
        if (!unlinked) throw notLinked();
        if (!unlinked.primary) return;
        const [oldest] = await users.accountsOf(snowflake);
        if (oldest) await users.makePrimary(snowflake, oldest.uuid);
      });
    },

    makePrimary(owner, snowflake, uuid) {
      return changeUser(owner, snowflake, async (users) => {
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

/** BCP 47, canonical (`en-us` -> `en-US`); an InputError when the text is not a language tag naming a language. */
function canonicalLocale(locale: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(locale);
    // `und` (undetermined) names no language: `und-x-private` is a private-use tag in disguise.
    const language = canonical && new Intl.Locale(canonical).language;
    if (canonical && language && language !== 'und') return canonical;
  } catch {
    // RangeError: not a well-formed tag.
  }
  throw new InputError([
    {
      field: ['locale'],
      rule: 'must be a BCP 47 language tag, such as en-US',
      developerRule: 'must be a BCP 47 language tag (RFC 5646), such as en-US or pt-BR',
    },
  ]);
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
