import {
  resetSecondsOf,
  THROTTLED_PAUSE_SECONDS,
  type UpstreamClient,
  type UpstreamResponse,
} from './http.js';
import { UpstreamFailure } from './upstream-failure.js';
import { isObject, parseUpstreamJson } from './upstream-json.js';

/** A player as Hypixel sent it: its JSON text (exact), and the name it goes by. */
export interface HypixelPlayer {
  readonly json: string;
  readonly displayName: string | undefined;
}

/** Each method's `owner` is whose lookup it is, charged to their share of the key (none: the service's own). */
export interface HypixelClient {
  /** The player, or null for a UUID that never joined. */
  player(uuid: string, owner?: bigint): Promise<HypixelPlayer | null>;
  /** The SkyBlock profiles as a JSON array text (`[]` when the player has none). */
  profiles(uuid: string, owner?: bigint): Promise<string>;
}

const NAME = 'hypixel';

/** Hypixel's API v2 (`/v2/player`, `/v2/skyblock/profiles`), its key in the API-Key header. */
export function createHypixelClient(http: UpstreamClient, apiKey: string | undefined): HypixelClient {
  const headers = { 'api-key': apiKey ?? '', accept: 'application/json' };

  /**
   * The answer's `field`, checked inside the request so that a wrong-shape 200 counts as a failure. Without
   * a key nothing is sent: Hypixel would refuse every call, and each would spend the upstream budget.
   */
  async function fetchField<T>(
    path: string,
    endpoint: string,
    owner: bigint | undefined,
    field: string,
    check: (value: unknown, serialize: (part: unknown) => string) => T,
  ): Promise<T> {
    if (!apiKey) throw noKey();
    return http.get(path, { endpoint, headers, owner }, (response) => {
      refuseErrors(response);
      const { value, serialize } = parseUpstreamJson(NAME, response.body);
      if (!isObject(value) || value.success !== true || !(field in value)) throw unexpectedShape();
      return check(value[field], serialize);
    });
  }

  return {
    player: (uuid, owner) =>
      fetchField(`/v2/player?uuid=${uuid}`, 'player', owner, 'player', (field, serialize) => {
        if (field === null) return null;
        if (!isObject(field)) throw unexpectedShape();
        const displayName = typeof field.displayname === 'string' ? field.displayname : undefined;
        return { json: serialize(field), displayName };
      }),
    profiles: (uuid, owner) =>
      fetchField(
        `/v2/skyblock/profiles?uuid=${uuid}`,
        'skyblock_profiles',
        owner,
        'profiles',
        (field, serialize) => {
          if (field === null) return '[]';
          if (!Array.isArray(field)) throw unexpectedShape();
          return serialize(field);
        },
      ),
  };
}

/** Said to every lookup that would need Hypixel while the service has no key for it. */
const noKey = () =>
  new UpstreamFailure(
    'unavailable',
    'the service has no Hypixel API key (its operator has not set HYPIXEL_API_KEY); cached players are still served',
  );

const unexpectedShape = () => new UpstreamFailure('bad_gateway', `${NAME} answered in an unexpected shape`);

function refuseErrors(response: UpstreamResponse): void {
  if (response.status === 200) return;
  if (response.status === 429) {
    throw new UpstreamFailure(
      'throttled',
      'the Hypixel API is throttling requests',
      resetSecondsOf(response.headers) ?? THROTTLED_PAUSE_SECONDS,
    );
  }
  const cause =
    response.status === 403
      ? 'the Hypixel API refused the service key'
      : `the Hypixel API answered ${response.status}`;
  throw new UpstreamFailure('bad_gateway', cause);
}
