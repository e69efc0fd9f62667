// Runs every scenario (or those whose name contains BENCH_ONLY) against the service and the baseline,
// one after the other in this one run, and prints throughput and latency with their ratios.
//   npm run bench            BENCH_DURATION_SECONDS (default 10), BENCH_CONNECTIONS (default 50),
//                            BENCH_ROUNDS (default 2: each side measured twice, in turns, its best kept)
// The load comes from wrk when it is installed (`apt-get install -y wrk`): autocannon, in JavaScript,
// saturates near 10k req/s on two cores and so flatters every ratio; it is used only without wrk.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildSync } from 'esbuild';
import { FAKE_API_KEY, type FakeUpstream, startFakeUpstream } from '../test/helpers/fake-upstream.js';
import { type Scenario, scenarios } from './scenarios.js';
import { hasWrk, type Measured, wrkLoad } from './wrk.js';

const duration = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const only = process.env.BENCH_ONLY;
/** Each side is measured this many times, in turns with the other, and its best run is kept. */
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token?: string;
}

/**
 * The servers under load run as plain JavaScript, as production runs the build: transpiled once by esbuild
 * (as the tests are), not through tsx, whose loader keeps function names with a call per closure made.
 */
const BUILD = '.bench-build';
function buildServers(): void {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(dir, name));
  rmSync(BUILD, { recursive: true, force: true });
  buildSync({
    entryPoints: [...sources('src'), ...sources('bench/servers')],
    outdir: BUILD,
    outbase: '.',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
}

function start(server: 'service' | 'baseline', env: Record<string, string>): Promise<Started> {
  const script = join(BUILD, 'bench', 'servers', `${server}.js`);
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').once('data', (line: string) => {
      const { port, token } = JSON.parse(line) as { port: number; token?: string };
      resolve({ child, url: `http://127.0.0.1:${port}`, token });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** The process's peak resident memory so far (VmHWM), in MiB; undefined where /proc is not there. */
function peakRssMiB({ child }: Started): number | undefined {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kib = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kib === undefined ? undefined : Number(kib) / 1024;
  } catch {
    return undefined;
  }
}

async function stop({ child }: Started): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** One GET as the load generator sends it, its body as sent on the wire (not decompressed). */
function sampleOf(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>((resolve, reject) => {
    httpRequest(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const sent: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') sent[name] = value;
        resolve({ status: response.statusCode ?? 0, headers: sent, body: Buffer.concat(chunks) });
      });
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

const useWrk = hasWrk();

/** CPU time (user and system) a process has used so far, in ms, from /proc; undefined elsewhere. */
function cpuMs({ child }: Started): number | undefined {
  try {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime, fields 14 and 15 of the whole line, in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Loads `url`, after a short warm-up (the JIT and the connection pool settle), and measures it; with the
 * process answering, also its CPU time per request over the measured run: a figure the sharing of two
 * cores with the load generator disturbs less than throughput.
 */
async function load(
  url: string,
  headers: Record<string, string>,
  script: string | undefined,
  answering: Started,
): Promise<Measured & { cpuUsPerRequest?: number }> {
  let measured: Measured;
  let cpuBefore: number | undefined;
  if (useWrk) {
    await wrkLoad(url, { connections, seconds: Math.min(3, duration), headers, script });
    cpuBefore = cpuMs(answering);
    measured = await wrkLoad(url, { connections, seconds: duration, headers, script });
  } else {
    if (script) throw new Error('POST scenarios need wrk (apt-get install -y wrk)');
    await autocannon({ url, connections, duration: Math.min(3, duration), headers });
    cpuBefore = cpuMs(answering);
    const result = await autocannon({ url, connections, duration, headers });
    measured = {
      requestsPerSecond: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      failures: result.errors + result.timeouts + result.non2xx,
    };
  }
  const cpuAfter = cpuMs(answering);
  if (cpuBefore === undefined || cpuAfter === undefined) return measured;
  return {
    ...measured,
    cpuUsPerRequest: ((cpuAfter - cpuBefore) * 1000) / (measured.requestsPerSecond * duration),
  };
}

interface Outcome {
  readonly scenario: string;
  readonly service: Measured & { readonly cpuUsPerRequest?: number };
  readonly baseline: Measured & { readonly cpuUsPerRequest?: number };
  /** The service process's peak resident memory, MiB. */
  readonly serviceRssMiB?: number;
  /** The bytes of one answer on the wire (compressed when the scenario asks). */
  readonly bodyBytes?: number;
  /** The bytes of the same answer uncompressed, for a compressed scenario. */
  readonly identityBytes?: number;
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
const best = (a: Outcome['service'] | undefined, b: Outcome['service']) =>
  a && a.requestsPerSecond >= b.requestsPerSecond ? a : b;

/**
 * Measures the service and its baseline in turns, `rounds` times each, and keeps each side's best run: on a
 * shared machine a neighbour's burst can halve one run, and taking turns lets both sides meet the same
 * weather.
 */
async function measureInTurns(
  service: () => Promise<Outcome['service']>,
  baseline: () => Promise<Outcome['baseline']>,
) {
  let serviceBest: Outcome['service'] | undefined;
  let baselineBest: Outcome['baseline'] | undefined;
  for (let round = 0; round < rounds; round++) {
    serviceBest = best(serviceBest, await service());
    baselineBest = best(baselineBest, await baseline());
  }
  return { service: serviceBest as Outcome['service'], baseline: baselineBest as Outcome['baseline'] };
}

async function runScenario(scenario: Scenario, upstream: FakeUpstream): Promise<Outcome> {
  const upstreamEnv: Record<string, string> = scenario.upstream
    ? { HYPIXEL_API_URL: upstream.url, MOJANG_API_URL: upstream.url, HYPIXEL_API_KEY: FAKE_API_KEY }
    : {};
  const service = await start('service', { ...upstreamEnv, ...scenario.env });
  const headers: Record<string, string> = {
    ...(scenario.authenticated && service.token ? { authorization: `Bearer ${service.token}` } : {}),
    ...scenario.headers,
  };
  const started: Started[] = [service];
  try {
    if (scenario.post) {
      // The baseline is the same process answering the same requests on a twin route that stores nothing.
      const { post } = scenario;
      const measured = await measureInTurns(
        () => load(`${service.url}${scenario.path}`, headers, post.script, service),
        () => load(`${service.url}${post.baselinePath}`, headers, post.script, service),
      );
      return { scenario: scenario.name, ...measured, serviceRssMiB: peakRssMiB(service) };
    }
    // This first request also fills the cache for cache-hit scenarios.
    const sample = await sampleOf(`${service.url}${scenario.path}`, headers);
    if (sample.status !== 200) throw new Error(`${scenario.name}: the service answered ${sample.status}`);
    let identityBytes: number | undefined;
    if (scenario.headers?.['accept-encoding']) {
      if (!sample.headers['content-encoding'])
        throw new Error(`${scenario.name}: the answer is not compressed`);
      const { 'accept-encoding': _, ...plain } = headers;
      identityBytes = (await sampleOf(`${service.url}${scenario.path}`, plain)).body.length;
    }
    const sent: Record<string, string> = {};
    for (const name of REPEATED_HEADERS) {
      const value = sample.headers[name];
      if (value !== undefined) sent[name] = value;
    }
    const file = join(mkdtempSync(join(tmpdir(), 'pds-bench-')), 'response.json');
    writeFileSync(file, JSON.stringify({ headers: sent, body: sample.body.toString('base64') }));
    const baseline = await start('baseline', { BASELINE_RESPONSE: file });
    started.push(baseline);
    const measured = await measureInTurns(
      () => load(`${service.url}${scenario.path}`, headers, undefined, service),
      () => load(`${baseline.url}${scenario.path}`, headers, undefined, baseline),
    );
    return {
      scenario: scenario.name,
      ...measured,
      serviceRssMiB: peakRssMiB(service),
      bodyBytes: sample.body.length,
      identityBytes,
    };
  } finally {
    for (const process of started) await stop(process).catch(() => undefined);
  }
}

const fixed = (value: number, digits = 2) => value.toFixed(digits);
const cpuText = ({ cpuUsPerRequest }: Outcome['service']) =>
  cpuUsPerRequest === undefined ? '' : `  CPU ${fixed(cpuUsPerRequest, 0)} us/req`;
const loadName = useWrk ? 'wrk' : 'autocannon';
console.log(
  `load=${loadName} connections=${connections} duration=${duration}s rounds=${rounds} (best of each side kept) node=${process.version}` +
    (useWrk
      ? ''
      : '\n*** wrk is not installed: autocannon (JavaScript) shares the cores and saturates near 10k req/s, so ' +
        'the baselines are under-measured and every ratio below is compressed towards 1. ' +
        'Install wrk (apt-get install -y wrk) for honest figures. ***'),
);
buildServers();
const upstream = await startFakeUpstream();
const outcomes: Outcome[] = [];
for (const scenario of scenarios.filter((candidate) => !only || candidate.name.includes(only))) {
  const outcome = await runScenario(scenario, upstream);
  outcomes.push(outcome);
  const { service, baseline } = outcome;
  console.log(`\n${scenario.name}`);
  console.log(
    `  service : ${fixed(service.requestsPerSecond, 0)} req/s  p50 ${service.p50Ms} ms  p99 ${service.p99Ms} ms  failures ${service.failures}` +
      cpuText(service) +
      (outcome.serviceRssMiB === undefined ? '' : `  peak RSS ${fixed(outcome.serviceRssMiB, 0)} MiB`),
  );
  console.log(
    `  ${scenario.post ? 'no-op   ' : 'baseline'}: ${fixed(baseline.requestsPerSecond, 0)} req/s  p50 ${baseline.p50Ms} ms  p99 ${baseline.p99Ms} ms  failures ${baseline.failures}` +
      cpuText(baseline),
  );
  console.log(
    `  ratio   : throughput ${fixed(service.requestsPerSecond / baseline.requestsPerSecond)} of baseline, ` +
      `p99 ${fixed(service.p99Ms / Math.max(baseline.p99Ms, 1))}x baseline`,
  );
  if (outcome.identityBytes)
    console.log(
      `  wire    : ${outcome.bodyBytes} bytes, ${fixed(((outcome.bodyBytes ?? 0) / outcome.identityBytes) * 100, 1)}% of ${outcome.identityBytes}`,
    );
  if (scenario.itemsPerRequest)
    console.log(`  items   : ${fixed(service.requestsPerSecond * scenario.itemsPerRequest, 0)} stored/s`);
}
await upstream.close();

console.log(
  '\n| scenario | service req/s | baseline req/s | ratio | p50 ms | p99 ms | p99 ratio | CPU us/req (baseline) | peak RSS MiB |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
const cpuCell = (service: Outcome['service'], baseline: Outcome['baseline']) =>
  service.cpuUsPerRequest === undefined
    ? '-'
    : `${fixed(service.cpuUsPerRequest, 0)} (${fixed(baseline.cpuUsPerRequest ?? 0, 0)})`;
for (const { scenario, service, baseline, serviceRssMiB } of outcomes) {
  console.log(
    `| ${scenario} | ${fixed(service.requestsPerSecond, 0)} | ${fixed(baseline.requestsPerSecond, 0)} | ` +
      `${fixed(service.requestsPerSecond / baseline.requestsPerSecond)} | ${service.p50Ms} | ${service.p99Ms} | ` +
      `${fixed(service.p99Ms / Math.max(baseline.p99Ms, 1))}x | ${cpuCell(service, baseline)} | ` +
      `${serviceRssMiB === undefined ? '-' : fixed(serviceRssMiB, 0)} |`,
  );
}
mkdirSync('bench/results', { recursive: true });
const report = {
  at: new Date().toISOString(),
  load: loadName,
  connections,
  durationSeconds: duration,
  rounds,
  node: process.version,
  outcomes,
};
writeFileSync('bench/results/latest.json', `${JSON.stringify(report, null, 2)}\n`);
console.log('\nwritten to bench/results/latest.json');
