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
