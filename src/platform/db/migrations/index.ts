import type { Migration } from 'kysely';
import { tokens } from './0001-tokens.js';
import { players } from './0002-players.js';

/**
 * Every migration, by name; names sort in the order they run (`0001-...`). Forward only: a released
 * migration is never edited, a change is a new migration.
 */
export const migrations: Readonly<Record<string, Migration>> = {
  '0001-tokens': tokens,
  '0002-players': players,
};
