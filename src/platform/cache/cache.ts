/** One cached answer: its HTTP status, its serialized body, and when it was fetched. */
export interface CacheEntry {
  readonly status: number;
  readonly body: Buffer;
  /** Epoch milliseconds when the upstream gave it. */
  readonly storedAt: number;
}

/**
 * A cache of answers by key. Implementations forget an entry after `keepForMs`; whether a remembered
 * entry is fresh or only good as a stale fallback is the caller's rule, from `storedAt`.
 * Errors of a shared cache are swallowed (a miss): a cache outage must not become a service outage.
 */
export interface Cache {
  get(key: string): Promise<CacheEntry | undefined>;
  set(key: string, entry: CacheEntry, keepForMs: number): Promise<void>;
  /**
   * Sets only when the key is absent; true when it did. A shared cache that cannot answer also says true,
   * so that a caller using this as a lock goes ahead instead of waiting on an outage.
   */
  add(key: string, entry: CacheEntry, keepForMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
}

const HEADER_BYTES = 10;

/** An entry as bytes for a shared cache: storedAt (8 bytes), status (2 bytes), then the body. */
export function encodeEntry(entry: CacheEntry): Buffer {
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeDoubleBE(entry.storedAt, 0);
  header.writeUInt16BE(entry.status, 8);
  return Buffer.concat([header, entry.body]);
}

export function decodeEntry(bytes: Buffer): CacheEntry | undefined {
  if (bytes.length < HEADER_BYTES) return undefined;
  return {
    storedAt: bytes.readDoubleBE(0),
    status: bytes.readUInt16BE(8),
    body: bytes.subarray(HEADER_BYTES),
  };
}
