// One scenario measured against its baseline in the same run: the service, and a bare node:http server
// writing the bytes the service wrote (or, for POSTs, the same process on a twin route storing nothing).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { FAKE_API_KEY, type FakeUpstream } from '../test/helpers/fake-upstream.js';
import {
  bearer,
  type Loaded,
  load,
  peakRssMiB,
  type Started,
  sampleOf,
  settings,
  start,
  stop,
} from './harness.js';
import type { Scenario } from './scenarios.js';

export interface Outcome {
  readonly scenario: string;
  readonly service: Loaded;
  readonly baseline: Loaded;
  /** The service process's peak resident memory, MiB. */
  readonly serviceRssMiB?: number;
  /** The bytes of one answer on the wire (compressed when the scenario asks). */
  readonly bodyBytes?: number;
  /** The bytes of the same answer uncompressed, for a compressed scenario. */
  readonly identityBytes?: number;
  /** For a compressed scenario: the smallest its coding makes of the answer (Brotli 10 and 11, gzip 9). */
  readonly smallestBytes?: number;
  /** Items one request carries (ping samples), when more than one. */
  readonly itemsPerRequest?: number;
  /** A POST scenario: its baseline is the no-op twin route, not a bare server. */
  readonly post?: boolean;
}

/** How long and how many times each side is measured. */
export interface Measuring {
  readonly seconds: number;
  readonly rounds: number;
}

/** Headers the baseline repeats: those the service sent, but for what node:http writes itself. */
const REPEATED_HEADERS = [
  'content-type',
  'content-encoding',
  'vary',
  'api-version',
  'x-request-id',
  'x-cache',
  'cache-control',
  'age',
  'ratelimit-policy',
  'ratelimit',
];

/** The better of two measurements of one side: noise from the machine only ever slows a run down. */
const best = (a: Loaded | undefined, b: Loaded) => (a && a.requestsPerSecond >= b.requestsPerSecond ? a : b);

/**
 * Measures the service and its baseline in turns, `rounds` times each, and keeps each side's best run: on a
 * shared machine a neighbour's burst can halve one run, and taking turns lets both sides meet the same
 * weather.
 */
async function measureInTurns(
  rounds: number,
  service: () => Promise<Loaded>,
  baseline: () => Promise<Loaded>,
): Promise<{ service: Loaded; baseline: Loaded }> {
  let serviceBest: Loaded | undefined;
  let baselineBest: Loaded | undefined;
  for (let round = 0; round < rounds; round++) {
    serviceBest = best(serviceBest, await service());
    baselineBest = best(baselineBest, await baseline());
  }
  return { service: serviceBest as Loaded, baseline: baselineBest as Loaded };
}

/** The service's environment to reach `upstream` with the key it accepts. */
export const upstreamEnv = (upstream: FakeUpstream): Record<string, string> => ({
  HYPIXEL_API_URL: upstream.url,
  MOJANG_API_URL: upstream.url,
  HYPIXEL_API_KEY: FAKE_API_KEY,
});

/** The smallest `encoding` makes of `bytes`: Brotli at qualities 10 and 11, gzip at level 9. */
function smallestOf(bytes: Buffer, encoding: 'br' | 'gzip'): number {
  if (encoding === 'gzip') return gzipSync(bytes, { level: 9 }).length;
  const at = (quality: number) =>
    brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: quality,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      },
    }).length;
  return Math.min(at(10), at(11));
}

/** Waits until the service says a compressed copy was made again in the background (its /metrics). */
async function refined(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const token = process.env.METRICS_TOKEN;
    const metrics = (
      await sampleOf(`${url}/metrics`, token ? { authorization: `Bearer ${token}` } : {})
    ).body.toString();
    if (/cache_variant_refinements_total\{[^}]*outcome="(smaller|kept)"\} [1-9]/.test(metrics)) return;
    await sleep(50);
  }
  throw new Error('the service made no compressed copy smaller within 30 s');
}

export async function runScenario(
  scenario: Scenario,
  upstream: FakeUpstream,
  { seconds, rounds }: Measuring = { seconds: settings.duration, rounds: settings.rounds },
): Promise<Outcome> {
  const service = await start('service', {
    ...(scenario.upstream ? upstreamEnv(upstream) : {}),
    ...scenario.env,
  });
  const headers: Record<string, string> = {
    ...(scenario.authenticated ? bearer(service.info.token) : {}),
    ...scenario.headers,
  };
  const started: Started[] = [service];
  const temporary: string[] = [];
  const described = { scenario: scenario.name, itemsPerRequest: scenario.itemsPerRequest };
  try {
    if (scenario.post) {
      // The baseline is the same process answering the same requests on a twin route that stores nothing.
      const options = { headers, script: scenario.post.script, seconds };
      const measured = await measureInTurns(
        rounds,
        () => load(`${service.url}${scenario.path}`, options, service),
        () => load(`${service.url}${scenario.post?.baselinePath}`, options, service),
      );
      return { ...described, ...measured, serviceRssMiB: peakRssMiB(service), post: true };
    }
    // This first request also fills the cache for cache-hit scenarios.
    let sample = await sampleOf(`${service.url}${scenario.path}`, headers);
    if (sample.status !== 200) throw new Error(`${scenario.name}: the service answered ${sample.status}`);
    let identityBytes: number | undefined;
    let smallestBytes: number | undefined;
    if (scenario.headers?.['accept-encoding']) {
      const encoding = sample.headers['content-encoding'];
      if (encoding !== 'br' && encoding !== 'gzip')
        throw new Error(`${scenario.name}: the answer is not compressed`);
      const { 'accept-encoding': _, ...plain } = headers;
      const identity = (await sampleOf(`${service.url}${scenario.path}`, plain)).body;
      identityBytes = identity.length;
      smallestBytes = smallestOf(identity, encoding);
      // A Brotli copy is made smaller in the background: the baseline writes the copy that stays.
      if (encoding === 'br') {
        await refined(service.url);
        sample = await sampleOf(`${service.url}${scenario.path}`, headers);
      }
    }
    const sent: Record<string, string> = {};
    for (const name of REPEATED_HEADERS) {
      const value = sample.headers[name];
      if (value !== undefined) sent[name] = value;
    }
    const dir = mkdtempSync(join(tmpdir(), 'pds-bench-'));
    temporary.push(dir);
    const file = join(dir, 'response.json');
    writeFileSync(file, JSON.stringify({ headers: sent, body: sample.body.toString('base64') }));
    const baseline = await start('baseline', { BASELINE_RESPONSE: file });
    started.push(baseline);
    const measured = await measureInTurns(
      rounds,
      () => load(`${service.url}${scenario.path}`, { headers, seconds }, service),
      () => load(`${baseline.url}${scenario.path}`, { headers, seconds }, baseline),
    );
    return {
      ...described,
      ...measured,
      serviceRssMiB: peakRssMiB(service),
      bodyBytes: sample.body.length,
      identityBytes,
      smallestBytes,
    };
  } finally {
    for (const process of started) await stop(process).catch(() => undefined);
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  }
}
