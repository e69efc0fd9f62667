import { resetSecondsOf, THROTTLED_PAUSE_SECONDS, type UpstreamClient } from './http.js';
import { UpstreamFailure } from './upstream-failure.js';
import { isObject, parseUpstreamJson } from './upstream-json.js';

export interface MojangProfile {
  /** Undashed lowercase UUID. */
  readonly id: string;
  /** The name in its canonical case. */
  readonly name: string;
}

export interface MojangClient {
  /** The profile of a username, or null when no player has it; `owner` is charged as in HypixelClient. */
  lookup(name: string, owner?: bigint): Promise<MojangProfile | null>;
}

const NAME = 'mojang';

/** Mojang's profile API: `/users/profiles/minecraft/{name}`; unknown is 404 (older servers: 204). */
export function createMojangClient(http: UpstreamClient): MojangClient {
  return {
    lookup: (name, owner) =>
      http.get(
        `/users/profiles/minecraft/${encodeURIComponent(name)}`,
        { endpoint: 'profile_by_name', headers: { accept: 'application/json' }, owner },
        (response) => {
          // Mojang says 400 for a name that cannot exist: for us, no such player either.
          if (response.status === 204 || response.status === 404 || response.status === 400) return null;
          if (response.status === 429) {
            throw new UpstreamFailure(
              'throttled',
              'the Mojang API is throttling requests',
              resetSecondsOf(response.headers) ?? THROTTLED_PAUSE_SECONDS,
            );
          }
          if (response.status !== 200)
            throw new UpstreamFailure('bad_gateway', `the Mojang API answered ${response.status}`);
          const { value } = parseUpstreamJson(NAME, response.body);
          if (
            !isObject(value) ||
            typeof value.id !== 'string' ||
            !/^[0-9a-fA-F]{32}$/.test(value.id) ||
            typeof value.name !== 'string'
          ) {
            throw new UpstreamFailure('bad_gateway', 'the Mojang API answered in an unexpected shape');
          }
          return { id: value.id.toLowerCase(), name: value.name };
        },
      ),
  };
}
