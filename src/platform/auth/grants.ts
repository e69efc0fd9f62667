/**
 * Every grant a token can carry, in two tiers: the one list. A module that needs a new grant adds it here
 * (and to the README's list); grants are part of the interface, so a released one is never renamed.
 */

/** What a developer application may ask for: each opens only what its owner reads and writes. */
export const DEVELOPER_GRANTS = [
  'player:read',
  'profiles:read',
  'ping:read',
  'messenger:log',
  'messenger:read',
  'messenger:write',
] as const;

/**
 * What only an operator gives (the command line), never an application: reviewing applications; writing
 * ping samples, which everyone reads (so only trusted collectors write them); and reading every owner's
 * interaction logs and chat-platform users.
 */
export const OPERATOR_GRANTS = ['applications:review', 'ping:write', 'messenger:audit'] as const;

export const GRANTS = [...DEVELOPER_GRANTS, ...OPERATOR_GRANTS] as const;

export type Grant = (typeof GRANTS)[number];
export type DeveloperGrant = (typeof DEVELOPER_GRANTS)[number];
export type OperatorGrant = (typeof OPERATOR_GRANTS)[number];

export const isGrant = (value: string): value is Grant => (GRANTS as readonly string[]).includes(value);

export const isOperatorGrant = (grant: Grant): grant is OperatorGrant =>
  (OPERATOR_GRANTS as readonly string[]).includes(grant);

/** What each grant opens, as the docs page and the README say it. */
export const GRANT_OPENS: Readonly<Record<Grant, string>> = {
  'player:read': "players' Hypixel data (GET /player/{player}, and up to 100 at once: POST /players)",
  'profiles:read': "a player's SkyBlock profiles (GET /gamemode/profiles/{player})",
  'ping:read': "a player's daily ping history (GET /ping/{player})",
  'messenger:log': "logging your bot's interactions (POST /messenger/logging/interaction)",
  'messenger:read': 'your own interaction logs and Discord users with their linked accounts',
  'messenger:write': "your own Discord users' locale and linked Minecraft accounts",
  'applications:review': 'reviewing developer applications: list, approve, reject, revoke',
  'ping:write': 'recording ping samples (POST /ping/{player}), which everyone reads',
  'messenger:audit': "every owner's interaction logs and Discord users",
};
