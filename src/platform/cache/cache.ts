/** One cached value: its bytes (an empty value means "known not to exist"), and when it was fetched. */
export interface CacheEntry {
  readonly bytes: Buffer;
  /** Epoch milliseconds when the upstream gave it. */
  readonly storedAt: number;
}

/**
 * A cache of values by key. Implementations forget an entry after `keepForMs`; whether a remembered entry
 * is fresh or only good as a stale fallback is the caller's rule, from `storedAt`.
 * Errors of a shared cache are swallowed (a miss): a cache outage must not become a service outage.
 */
export interface Cache {
  get(key: string): Promise<CacheEntry | undefined>;
  set(key: string, entry: CacheEntry, keepForMs: number): Promise<void>;
}

const HEADER_BYTES = 8;

/** An entry as bytes for a shared cache: storedAt (8 bytes), then the value. */
export function encodeEntry(entry: CacheEntry): Buffer {
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeDoubleBE(entry.storedAt, 0);
  return Buffer.concat([header, entry.bytes]);
}

/**
 * The entry in `bytes`, its value copied out: a reply from Redis can be a slice of the client's read buffer,
 * up to three times its size, and a copy kept in process would hold all of it while the in-process tier's
 * bound counts only the value.
 */
export function decodeEntry(bytes: Buffer): CacheEntry | undefined {
  if (bytes.length < HEADER_BYTES) return undefined;
  return { storedAt: bytes.readDoubleBE(0), bytes: ownBytes(bytes.subarray(HEADER_BYTES)) };
}

/**
 * `bytes` in memory of their own (copied unless they are already): a Buffer that is a view into a larger
 * one keeps all of it alive. Node makes every Buffer under 4 KiB (`Buffer.from`, `Buffer.concat`) as a
 * slice of a shared 8 KiB pool, so a kept 400-byte value held about 1.7 KiB, and a cache of many small
 * values passed its byte bound.
 */
export function ownBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.length === bytes.buffer.byteLength) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}
