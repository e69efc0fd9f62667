import type { Migration } from 'kysely';

/**
 * Every migration, by name; names sort in the order they run (`0001-...`). Forward only: a released
 * migration is never edited, a change is a new migration. Each module's migration lives beside this file.
 */
export const migrations: Readonly<Record<string, Migration>> = {};
