import type { Freshness } from '../../platform/cache/cached-resource.js';
import { parseJsonExact } from '../../platform/json.js';

/**
 * A found player is kept in the cache as the bytes of its PlayerResult body, so that a cache hit is sent
 * as it is: no parse, no serialization, no copy (docs/decisions.md). The player object is a view into it.
 */
const BODY_PREFIX = '{"success":true,"throttle":false,"player":';
const BODY_PREFIX_BYTES = Buffer.byteLength(BODY_PREFIX);
const BODY_SUFFIX_BYTES = 1;

/** The cached form of a player object's JSON text. */
export const encodePlayer = (json: string): Buffer => Buffer.from(`${BODY_PREFIX}${json}}`);

/** A player as the service knows it: Hypixel's player object, where the copy came from, and how old it is. */
export class PlayerSnapshot {
  #data: Record<string, unknown> | undefined;

  constructor(
    /** Undashed lowercase. */
    readonly uuid: string,
    /** The PlayerResult body `{"success":true,"throttle":false,"player":{...}}`, as kept in the cache. */
    readonly body: Buffer,
    readonly freshness: Freshness,
  ) {}

  /** The player object exactly as Hypixel sent it (JSON text bytes): a view into `body`. */
  get json(): Buffer {
    return this.body.subarray(BODY_PREFIX_BYTES, this.body.length - BODY_SUFFIX_BYTES);
  }

  /** The player object, parsed on first use (integers beyond 2^53 keep their digits, as strings). */
  data(): Readonly<Record<string, unknown>> {
    this.#data ??= parseJsonExact(this.json.toString('utf8')) as Record<string, unknown>;
    return this.#data;
  }

  /** The name the player goes by on Hypixel. */
  displayName(): string | undefined {
    const name = this.data().displayname;
    return typeof name === 'string' ? name : undefined;
  }

  /** The Discord account the player linked on their Hypixel profile (`socialMedia.links.DISCORD`). */
  discordLink(): string | undefined {
    const link = field(field(field(this.data(), 'socialMedia'), 'links'), 'DISCORD');
    return typeof link === 'string' ? link : undefined;
  }
}

const field = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[name]
    : undefined;
