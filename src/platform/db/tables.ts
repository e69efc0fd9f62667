/**
 * The database's tables as Kysely sees them. Modules add their tables here with their migrations.
 * Conventions (docs/decisions.md): 64-bit Discord IDs are TEXT of decimal digits; times are epoch
 * milliseconds in BIGINT (PostgreSQL) / INTEGER (SQLite) columns, read back as numbers.
 */
// biome-ignore lint/complexity/noBannedTypes: no tables yet; the first module's migration adds them.
export type Tables = {};
