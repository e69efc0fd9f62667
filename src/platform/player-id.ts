/**
 * Minecraft player identifiers as clients give them: a UUID (32 hex digits, dashed 8-4-4-4-12 or not, any
 * case) or a username (1 to 16 letters, digits or underscores).
 */
const DASHED_UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const UNDASHED_UUID = /^[0-9a-fA-F]{32}$/;
const USERNAME = /^[A-Za-z0-9_]{1,16}$/;

/** The same rule as one pattern, for schemas. */
export const PLAYER_PATTERN = `^(${UNDASHED_UUID.source.slice(1, -1)}|${DASHED_UUID.source.slice(1, -1)}|${USERNAME.source.slice(1, -1)})$`;

/** A player named by UUID (undashed lowercase, as the upstream writes it) or by username (as given). */
export type PlayerRef = { readonly uuid: string } | { readonly username: string };

/** What a `{player}` names, normalised; undefined when it is neither a UUID nor a username. */
export function parsePlayerRef(text: string): PlayerRef | undefined {
  if (UNDASHED_UUID.test(text) || DASHED_UUID.test(text)) return { uuid: normalizeUuid(text) };
  if (USERNAME.test(text)) return { username: text };
  return undefined;
}

/** A UUID undashed and lowercased, the form the service stores and returns. */
const normalizeUuid = (uuid: string): string => uuid.replaceAll('-', '').toLowerCase();
