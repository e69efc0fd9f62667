/*
 * Whole UTC days, as the service counts them: retentions in days, ping days and usage days.
 */

/** A day in milliseconds: every UTC day is this long (JavaScript counts no leap seconds). */
export const DAY_MS = 86_400_000;

/** The UTC calendar day of an instant (epoch ms), `YYYY-MM-DD`. */
export const dayOf = (at: number): string => new Date(at).toISOString().slice(0, 10);
