// Bulk reads: what a player read costs the service when 100 cached players come in one `POST /players`,
// against 100 single `GET /player/{uuid}` hits, in the same run on the same process: the CPU time per player.
import { readFileSync } from 'node:fs';
import { startFakeUpstream } from '../test/helpers/fake-upstream.js';
import { upstreamEnv } from './compare.js';
import { type Loaded, load, settings, start, stop } from './harness.js';
import { SEED_PREFIX } from './servers/bench-players.js';

/** The part's name, as BENCH_ONLY selects it. */
export const BULK = 'bulk reads';
/** Players per bulk read (the most one may name), and the cached players the singles pick among. */
const PLAYERS = 100;

export interface BulkReads {
  readonly players: number;
  readonly playerBytes: number;
  readonly connections: number;
  readonly seconds: number;
  readonly rounds: number;
  /** `GET /player/{uuid}`, a cached player picked at random among the PLAYERS. */
  readonly single: Loaded;
  /** `POST /players` naming all PLAYERS. */
  readonly bulk: Loaded;
}

/** The better of two runs: noise from the machine only ever slows a run down. */
const best = (a: Loaded | undefined, b: Loaded) => (a && a.requestsPerSecond >= b.requestsPerSecond ? a : b);

/**
 * The service with 100 typical players cached (46 KB each, looked up through its route from a fake upstream
 * answering any UUID with a copy of the fixture), loaded in turns with single reads and with bulk reads of
 * the same players; each side's best run of `rounds` kept.
 */
export async function runBulk(): Promise<BulkReads> {
  const template = readFileSync('test/fixtures/hypixel/player.json');
  const upstream = await startFakeUpstream({
    rateLimit: 1_000_000_000,
    rateLimitWindowSeconds: 3600,
    anyPlayer: template,
  });
  const service = await start('service', {
    ...upstreamEnv(upstream),
    BENCH_CACHE_SEED_PLAYERS: String(PLAYERS),
    CACHE_PLAYER_FRESH_SECONDS: '86400',
    UPSTREAM_OWNER_SHARE_PERCENT: '100',
  });
  const { connections, duration: seconds, rounds } = settings;
  const headers = { authorization: `Bearer ${service.info.token}` };
  const scriptArgs = [SEED_PREFIX, String(PLAYERS)];
  let single: Loaded | undefined;
  let bulk: Loaded | undefined;
  try {
    for (let round = 0; round < rounds; round++) {
      single = best(
        single,
        await load(
          service.url,
          { headers, script: 'bench/random-players.lua', scriptArgs, seconds },
          service,
        ),
      );
      bulk = best(
        bulk,
        await load(
          `${service.url}/players`,
          { headers, script: 'bench/bulk-players.lua', scriptArgs, seconds },
          service,
        ),
      );
    }
  } finally {
    await stop(service);
    await upstream.close();
  }
  const playerBytes = JSON.parse(template.toString('utf8')) as unknown;
  return {
    players: PLAYERS,
    playerBytes: Buffer.byteLength(JSON.stringify(playerBytes)),
    connections,
    seconds,
    rounds,
    single: single as Loaded,
    bulk: bulk as Loaded,
  };
}

const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);

/** CPU per player of each side, and their ratio. */
export function bulkFigures({ players, single, bulk }: BulkReads) {
  const singleUs = single.cpuUsPerRequest;
  const bulkUs = bulk.cpuUsPerRequest === undefined ? undefined : bulk.cpuUsPerRequest / players;
  const ratio = singleUs === undefined || bulkUs === undefined ? undefined : bulkUs / singleUs;
  return { singleUs, bulkUs, ratio };
}

/** The report's section. */
export function bulkSection(result: BulkReads): string {
  const { players, single, bulk } = result;
  const { singleUs, bulkUs, ratio } = bulkFigures(result);
  const row = (what: string, loaded: Loaded, perRequest: number, perPlayer: number | undefined) =>
    `| ${what} | ${fixed(loaded.requestsPerSecond)} | ${fixed(loaded.requestsPerSecond * perRequest)} | ` +
    `${fixed(loaded.p50Ms, 2)} | ${fixed(loaded.p99Ms, 2)} | ${fixed(loaded.cpuUsPerRequest)} | ${fixed(perPlayer, 1)} | ${loaded.failures} |`;
  return [
    `## Bulk reads: ${players} cached players in one call`,
    '',
    `The service with ${players} typical players cached (${fixed(result.playerBytes / 1024)} KiB each), loaded on ` +
      `${result.connections} connections for ${result.seconds} s after a warm-up of 3 s, in turns, ${result.rounds} ` +
      'time(s) each, its best run kept: single reads (`GET /player/{uuid}`, a player picked at random among them, ' +
      'bench/random-players.lua) and bulk reads (`POST /players` naming all of them, bench/bulk-players.lua), ' +
      "both on the same process. CPU is the process's (user + system, /proc) over the measured run.",
    '',
    '| read | req/s | players/s | p50 ms | p99 ms | CPU us/req | CPU us/player | failures |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    row('`GET /player/{uuid}`, one player', single, 1, singleUs),
    row(`\`POST /players\`, ${players} players`, bulk, players, bulkUs),
    '',
    `- A player in a bulk read costs ${fixed(ratio, 2)} of the CPU of a single read (the goal: at most 0.33).`,
  ].join('\n');
}
