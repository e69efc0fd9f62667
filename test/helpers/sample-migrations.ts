import type { Kysely, Migration } from 'kysely';

/** Two migrations for testing the migrator; the first is slow, so that a second migrator arrives while it runs. */
export function sampleMigrations(runs: string[], slowMs = 300): Record<string, Migration> {
  return {
    '0001-widgets': {
      async up(db: Kysely<unknown>) {
        runs.push('0001');
        await db.schema
          .createTable('widgets')
          .addColumn('id', 'integer', (column) => column.primaryKey())
          .execute();
        await new Promise((resolve) => setTimeout(resolve, slowMs));
      },
    },
    '0002-widget-names': {
      async up(db: Kysely<unknown>) {
        runs.push('0002');
        await db.schema.alterTable('widgets').addColumn('name', 'text').execute();
      },
    },
  };
}
