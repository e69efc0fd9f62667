/**
 * Every grant a token can carry: the one list. A module that needs a new grant adds it here (and to the
 * README's list); grants are part of the interface, so a released one is never renamed.
 */
export const GRANTS = [
  'player:read',
  'profiles:read',
  'ping:read',
  'ping:write',
  'messenger:log',
  'messenger:read',
  'messenger:write',
  'applications:review',
] as const;

export type Grant = (typeof GRANTS)[number];

export const isGrant = (value: string): value is Grant => (GRANTS as readonly string[]).includes(value);
