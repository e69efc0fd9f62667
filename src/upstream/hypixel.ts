import { resetSecondsOf, type UpstreamClient, type UpstreamResponse } from './http.js';
import { UpstreamFailure } from './upstream-failure.js';
import { isObject, parseUpstreamJson } from './upstream-json.js';

/** A player as Hypixel sent it: its JSON text (exact), and the name it goes by. */
export interface HypixelPlayer {
  readonly json: string;
  readonly displayName: string | undefined;
}

export interface HypixelClient {
  /** The player, or null for a UUID that never joined. */
  player(uuid: string): Promise<HypixelPlayer | null>;
  /** The SkyBlock profiles as a JSON array text (`[]` when the player has none). */
  profiles(uuid: string): Promise<string>;
}

const NAME = 'hypixel';

/** Hypixel's API v2 (`/v2/player`, `/v2/skyblock/profiles`), its key in the API-Key header. */
export function createHypixelClient(http: UpstreamClient, apiKey: string | undefined): HypixelClient {
  const headers: Record<string, string> = apiKey
    ? { 'api-key': apiKey, accept: 'application/json' }
    : { accept: 'application/json' };

  async function fetchField(path: string, endpoint: string, field: string) {
    const response = await http.get(path, { endpoint, headers });
    refuseErrors(response);
    const { value, serialize } = parseUpstreamJson(NAME, response.body);
    if (!isObject(value) || value.success !== true || !(field in value)) {
      throw new UpstreamFailure('bad_gateway', `${NAME} answered in an unexpected shape`);
    }
    return { field: value[field], serialize };
  }

  return {
    async player(uuid) {
      const { field, serialize } = await fetchField(`/v2/player?uuid=${uuid}`, 'player', 'player');
      if (field === null) return null;
      if (!isObject(field))
        throw new UpstreamFailure('bad_gateway', `${NAME} answered in an unexpected shape`);
      const displayName = typeof field.displayname === 'string' ? field.displayname : undefined;
      return { json: serialize(field), displayName };
    },
    async profiles(uuid) {
      const { field, serialize } = await fetchField(
        `/v2/skyblock/profiles?uuid=${uuid}`,
        'skyblock_profiles',
        'profiles',
      );
      if (field === null) return '[]';
      if (!Array.isArray(field))
        throw new UpstreamFailure('bad_gateway', `${NAME} answered in an unexpected shape`);
      return serialize(field);
    },
  };
}

function refuseErrors(response: UpstreamResponse): void {
  if (response.status === 200) return;
  if (response.status === 429) {
    throw new UpstreamFailure(
      'throttled',
      'the Hypixel API is throttling requests',
      resetSecondsOf(response.headers) ?? 60,
    );
  }
  const cause =
    response.status === 403
      ? 'the Hypixel API refused the service key'
      : `the Hypixel API answered ${response.status}`;
  throw new UpstreamFailure('bad_gateway', cause);
}
