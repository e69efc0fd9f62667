// Fair share: one owner floods the costliest routes while another reads cached players. The other's p99 is
// measured alone, under the flood with every owner on the default budget of work, and under the same flood
// with the flooder given a budget no load reaches (what the service did before owners had budgets). Also what
// a rejected 1 MiB body of unknown keys costs the service, against what parsing it costs.
import type { FakeUpstream } from '../test/helpers/fake-upstream.js';
import { upstreamEnv } from './compare.js';
import { bearer, type Loaded, load, type Started, settings, start, stop } from './harness.js';
import { PLAYERS } from './scenarios.js';
import { type Measured, measuredOf, wrkOutput } from './wrk.js';

/** The part's name, as BENCH_ONLY selects it. */
export const FAIR_SHARE = 'fair share';

/** The ping history the flood reads: this many days of 1440 samples. */
const FLOOD_PING_DAYS = 90;
const FLOOD_CONNECTIONS = 50;
/** The reader: a few connections, each pausing between requests (bench/paced.lua), about 200 reads/s. */
const READER = { connections: 4, pauseMs: 20 } as const;
const PING_PLAYER = '20934ef9488c465180a78f861586b4cf';

export interface FloodRun {
  /** The reader's cached GET /player under the flood. */
  readonly reader: Measured;
  /** The flood's answers by status. */
  readonly flood: Readonly<Record<string, number>>;
  readonly floodRequestsPerSecond: number;
}

export interface FairShare {
  readonly seconds: number;
  readonly floodConnections: number;
  readonly readerConnections: number;
  readonly readerPauseMs: number;
  readonly pingDays: number;
  readonly quiet: Measured;
  /** The flooder on the default budget (WORK_BUDGET_UNITS / WORK_BUDGET_WINDOW_SECONDS). */
  readonly budgeted: FloodRun;
  /** The flooder on the default budget, its refusals answered at once (WORK_BUDGET_REFUSAL_DELAY_MS=0). */
  readonly unheld: FloodRun;
  /** The flooder with a budget no load reaches. */
  readonly unbudgeted: FloodRun;
  readonly rejection?: Rejection;
}

export interface Rejection {
  readonly bodyBytes: number;
  readonly keys: number;
  /** The service's CPU per rejected request (400, 20 problems), us. */
  readonly serviceCpuUs: number;
  readonly answerBytes: number;
  /** Parsing the same body as the service does (src/platform/json.ts), median of runs in the bench's process, us. */
  readonly parseUs: number;
}

const statusesOf = (output: string): Record<string, number> =>
  Object.fromEntries(
    [...output.matchAll(/^status (\d+) (\d+)$/gm)].map((m) => [m[1] as string, Number(m[2])]),
  );

async function readerLoad(service: Started, seconds: number): Promise<Measured> {
  const token = service.info.tokens?.[0];
  return measuredOf(
    await wrkOutput(`${service.url}/player/${PLAYERS.typical}`, {
      headers: bearer(token),
      script: 'bench/paced.lua',
      scriptArgs: [String(READER.pauseMs)],
      connections: READER.connections,
      threads: 1,
      seconds,
    }),
  );
}

/** The flood (owner 2) and, starting two seconds into it, the reader (owner 1). */
async function flooded(service: Started, seconds: number): Promise<FloodRun> {
  const floodSeconds = seconds + 4;
  const flood = wrkOutput(`${service.url}/ping/${PING_PLAYER}`, {
    headers: bearer(service.info.tokens?.[1]),
    script: 'bench/flood.lua',
    connections: FLOOD_CONNECTIONS,
    threads: 1,
    seconds: floodSeconds,
  });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const reader = await readerLoad(service, seconds);
  const output = await flood;
  const statuses = statusesOf(output);
  const total = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return { reader, flood: statuses, floodRequestsPerSecond: total / floodSeconds };
}

async function withFairShareService<T>(
  upstream: FakeUpstream,
  raised: string,
  use: (service: Started) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const service = await start('service', {
    ...env,
    ...upstreamEnv(upstream),
    CACHE_PLAYER_FRESH_SECONDS: '86400',
    BENCH_TOKEN_OWNERS: '2',
    BENCH_RAISED_OWNERS: raised,
    // The service's own default budget for every owner not raised.
    WORK_BUDGET_UNITS: '',
    WORK_BUDGET_MAX_IN_FLIGHT: '',
    BENCH_PING_SEED_DAYS: String(FLOOD_PING_DAYS),
    BENCH_PING_SEED_PER_DAY: '1440',
    PING_RETENTION_DAYS: '400',
  });
  try {
    // The reader's player is cached before anything is measured.
    await readerLoad(service, 1);
    return await use(service);
  } finally {
    await stop(service);
  }
}

export async function runFairShare(upstream: FakeUpstream): Promise<FairShare> {
  // Twice a scenario's time: a p99 of a paced reader is a few dozen answers, noisy over a short run.
  const seconds = settings.duration * 2;
  const [quiet, budgeted] = await withFairShareService(upstream, '1', async (service) => [
    await readerLoad(service, seconds),
    await flooded(service, seconds),
  ]);
  const unheld = await withFairShareService(upstream, '1', (service) => flooded(service, seconds), {
    WORK_BUDGET_REFUSAL_DELAY_MS: '0',
  });
  const unbudgeted = await withFairShareService(upstream, '1,2', (service) => flooded(service, seconds));
  return {
    seconds,
    floodConnections: FLOOD_CONNECTIONS,
    readerConnections: READER.connections,
    readerPauseMs: READER.pauseMs,
    pingDays: FLOOD_PING_DAYS,
    quiet,
    budgeted,
    unheld,
    unbudgeted,
    rejection: await runRejection(upstream),
  };
}

/** The flood's 1 MiB body of unknown keys, as bench/flood.lua builds it. */
function unknownKeysBody(): string {
  const keys = Array.from({ length: 90_000 }, (_, index) => `"k${index + 1}":0`);
  return `{${keys.join(',')}}`;
}

/** The service's CPU per rejected 1 MiB body of unknown keys, beside the bench process parsing it. */
async function runRejection(upstream: FakeUpstream): Promise<Rejection> {
  const body = unknownKeysBody();
  const { parseJsonBody } = (await import(
    '../src/platform/json.js'
  )) as typeof import('../src/platform/json.js');
  const runs: number[] = [];
  for (let run = 0; run < 15; run++) {
    const startedAt = process.hrtime.bigint();
    parseJsonBody(body, 64);
    runs.push(Number(process.hrtime.bigint() - startedAt) / 1000);
  }
  runs.sort((a, b) => a - b);
  return withFairShareService(upstream, '1,2', async (service) => {
    const loaded: Loaded = await load(
      `${service.url}/ping/${PING_PLAYER}`,
      {
        headers: bearer(service.info.tokens?.[1]),
        script: 'bench/unknown-keys.lua',
        connections: 2,
        threads: 1,
        seconds: settings.duration,
      },
      service,
    );
    const answer = await fetch(`${service.url}/ping/${PING_PLAYER}`, {
      method: 'POST',
      headers: { ...bearer(service.info.tokens?.[1]), 'content-type': 'application/json' },
      body,
    });
    return {
      bodyBytes: Buffer.byteLength(body),
      keys: 90_000,
      serviceCpuUs: loaded.cpuUsPerRequest ?? Number.NaN,
      answerBytes: Buffer.byteLength(await answer.text()),
      parseUs: runs[Math.floor(runs.length / 2)] ?? Number.NaN,
    };
  });
}

const num = (value: number, digits = 0) => value.toFixed(digits);
/** Milliseconds as wrk gave them, to two decimals (wrk's microseconds make float noise). */
const ms = (value: number) => String(Number(value.toFixed(2)));

function floodRow(name: string, run: FloodRun, quiet: Measured): string {
  const refused = run.flood['429'] ?? 0;
  const served = Object.entries(run.flood)
    .filter(([status]) => status.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  const other = Object.entries(run.flood)
    .filter(([status]) => status !== '429' && !status.startsWith('2'))
    .map(([status, count]) => `${count} ${status}`)
    .join(', ');
  // wrk counts only the answers that came within the run: none at all reads as 0 req/s and 0 ms.
  const reader =
    run.reader.requestsPerSecond > 0
      ? `${num(run.reader.requestsPerSecond)} | ${ms(run.reader.p50Ms)} | ${ms(run.reader.p99Ms)} | ` +
        `${num(run.reader.p99Ms / quiet.p99Ms, 1)}x`
      : 'no answer within the run | - | - | -';
  return `| ${name} | ${reader} | ${num(run.floodRequestsPerSecond)} | ${served} | ${refused} | ${other || '-'} |`;
}

/** The report's section. */
export function fairShareSection(result: FairShare): string {
  const { quiet } = result;
  const lines = [
    '## Fair share: one owner flooding, another reading',
    '',
    `Owner 2 floods at ${result.floodConnections} connections, in turn: \`GET /ping/{uuid}\` (${result.pingDays} days ` +
      'of 1440 samples), `POST /ping/{uuid}` with a 1 MiB body of 90,000 unknown keys, and `POST /ping/{uuid}` ' +
      `with 1000 samples (bench/flood.lua). Owner 1 reads a cached typical player (\`GET /player/{uuid}\`) on ` +
      `${result.readerConnections} connections, each pausing ${result.readerPauseMs} ms between requests ` +
      `(bench/paced.lua), for ${result.seconds} s: alone, then two seconds into the flood (the flooder on the ` +
      'default budget; the same with its refusals not held, WORK_BUDGET_REFUSAL_DELAY_MS=0; and with a budget ' +
      "no load reaches, as before owners had budgets). The goal: the reader's " +
      'p99 under the flood within 3x of its p99 alone, and the flooder answered 429s, not 200s.',
    '',
    '| flooder | reader req/s | reader p50 ms | reader p99 ms | p99 vs alone | flood req/s | flood 2xx | flood 429 | flood other |',
    '|---|---|---|---|---|---|---|---|---|',
    `| none (the reader alone) | ${num(quiet.requestsPerSecond)} | ${ms(quiet.p50Ms)} | ${ms(quiet.p99Ms)} | 1.0x | - | - | - | - |`,
    floodRow('on the default budget of work', result.budgeted, quiet),
    floodRow('on the default budget, refusals answered at once', result.unheld, quiet),
    floodRow('with a budget no load reaches', result.unbudgeted, quiet),
  ];
  const { rejection } = result;
  if (rejection) {
    lines.push(
      '',
      `A rejected body: \`POST /ping/{uuid}\` with ${num(rejection.bodyBytes / 1024)} KiB of ${rejection.keys} unknown ` +
        `keys (its owner's budget raised) costs the service ${num(rejection.serviceCpuUs / 1000, 1)} ms of CPU per ` +
        `request, against ${num(rejection.parseUs / 1000, 1)} ms to parse the body alone (median of 15, in the ` +
        `bench's process): ${num(rejection.serviceCpuUs / rejection.parseUs, 2)}x. Its answer is ` +
        `${rejection.answerBytes} bytes (20 problems).`,
    );
  }
  return lines.join('\n');
}
