/**
 * Which constraint a database refused a write by, from the driver's error code, so that a test of one
 * constraint fails when another refuses its write instead (a missing user's reference where the key was
 * meant, say).
 */
const KEY_CODES = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE', '23505']);
const REFERENCE_CODES = new Set(['SQLITE_CONSTRAINT_FOREIGNKEY', '23503']);

const codeOf = (error: unknown): unknown => (error as { code?: unknown }).code;

/** A primary key or unique index refused the write. */
export const byKey = (error: unknown): boolean => KEY_CODES.has(String(codeOf(error)));
/** A foreign key refused the write. */
export const byReference = (error: unknown): boolean => REFERENCE_CODES.has(String(codeOf(error)));
