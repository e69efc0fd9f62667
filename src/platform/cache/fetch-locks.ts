/**
 * Cross-instance coordination of one fetch per key: whoever holds a key's lock fetches; the others wait
 * for the answer to land in the shared cache, or for the holder's failure note. Each holder is told apart
 * by its own token, so a note is read only by those who waited on that holder, and a lease that lapsed
 * cannot release a later holder's lock.
 */
export interface FetchLocks {
  /**
   * Takes the key's lock for at most `ttlMs` if nobody holds it: a lease; or, in the same step, who does
   * hold it (so that a waiter cannot miss the note of a holder that fails right after). A store that
   * cannot answer gives a lease that does nothing, so that its callers go ahead instead of waiting on an
   * outage.
   */
  acquire(key: string, ttlMs: number): Promise<FetchLease | HeldBy>;
  /** The token of the key's current holder, or undefined when nobody holds it (or the store cannot tell). */
  holder(key: string): Promise<string | undefined>;
  /** The note the holder `token` left when its fetch failed, if it did (kept for a short while). */
  failureOf(key: string, token: string): Promise<Buffer | undefined>;
}

export interface FetchLease {
  readonly token: string;
  /** Gives the lock up, leaving `failure` (when given) for the instances that waited on this holder. */
  release(failure?: Buffer): Promise<void>;
}

export interface HeldBy {
  /** The token of the holder. */
  readonly heldBy: string;
}

/** How long a holder's failure note stays readable by the instances that waited on it. */
export const FAILURE_NOTE_MS = 2000;
