// Runs every scenario (or those whose name contains BENCH_ONLY) against the service and the baseline,
// one after the other in this one run, and prints throughput and latency with their ratios.
//   npm run bench            BENCH_DURATION_SECONDS (default 10), BENCH_CONNECTIONS (default 50)
// The load comes from wrk when it is installed (`apt-get install -y wrk`): autocannon, in JavaScript,
// saturates near 10k req/s on two cores and so flatters every ratio; it is used only without wrk.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { FAKE_API_KEY, type FakeUpstream, startFakeUpstream } from '../test/helpers/fake-upstream.js';
import { type Scenario, scenarios } from './scenarios.js';
import { hasWrk, type Measured, wrkLoad } from './wrk.js';

const duration = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const only = process.env.BENCH_ONLY;

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token?: string;
}

function start(script: string, env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
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

async function stop({ child }: Started): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const useWrk = hasWrk();

async function load(url: string, headers: Record<string, string>, script?: string): Promise<Measured> {
  // A short warm-up lets the JIT and the connection pool settle before the measured run.
  if (useWrk) {
    await wrkLoad(url, { connections, seconds: Math.min(3, duration), headers, script });
    return wrkLoad(url, { connections, seconds: duration, headers, script });
  }
  if (script) throw new Error('POST scenarios need wrk (apt-get install -y wrk)');
  await autocannon({ url, connections, duration: Math.min(3, duration), headers });
  const result = await autocannon({ url, connections, duration, headers });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

async function runScenario(scenario: Scenario, upstream: FakeUpstream) {
  const upstreamEnv: Record<string, string> = scenario.upstream
    ? { HYPIXEL_API_URL: upstream.url, MOJANG_API_URL: upstream.url, HYPIXEL_API_KEY: FAKE_API_KEY }
    : {};
  const service = await start('bench/servers/service.ts', { ...upstreamEnv, ...scenario.env });
  const headers: Record<string, string> =
    scenario.authenticated && service.token ? { authorization: `Bearer ${service.token}` } : {};
  let serviceResult: Measured;
  let baselineResult: Measured;
  if (scenario.post) {
    // The baseline is the same process answering the same requests on a twin route that stores nothing.
    try {
      serviceResult = await load(`${service.url}${scenario.path}`, headers, scenario.post.script);
      baselineResult = await load(
        `${service.url}${scenario.post.baselinePath}`,
        headers,
        scenario.post.script,
      );
    } finally {
      await stop(service);
    }
    return { scenario: scenario.name, service: serviceResult, baseline: baselineResult };
  }
  try {
    // This first request also fills the cache for cache-hit scenarios.
    const sample = await fetch(`${service.url}${scenario.path}`, { headers });
    if (!sample.ok) throw new Error(`${scenario.name}: the service answered ${sample.status}`);
    const sent: Record<string, string> = {};
    for (const name of ['content-type', 'api-version', 'x-request-id', 'x-cache', 'cache-control', 'age']) {
      const value = sample.headers.get(name);
      if (value !== null) sent[name] = value;
    }
    const body = Buffer.from(await sample.arrayBuffer()).toString('base64');
    const file = join(mkdtempSync(join(tmpdir(), 'pds-bench-')), 'response.json');
    writeFileSync(file, JSON.stringify({ headers: sent, body }));
    serviceResult = await load(`${service.url}${scenario.path}`, headers);
    await stop(service);
    const baseline = await start('bench/servers/baseline.ts', { BASELINE_RESPONSE: file });
    try {
      baselineResult = await load(`${baseline.url}${scenario.path}`, headers);
    } finally {
      await stop(baseline);
    }
  } catch (error) {
    await stop(service).catch(() => undefined);
    throw error;
  }
  return { scenario: scenario.name, service: serviceResult, baseline: baselineResult };
}

const fixed = (value: number, digits = 2) => value.toFixed(digits);
console.log(
  `load=${useWrk ? 'wrk' : 'autocannon (install wrk for honest ratios)'} connections=${connections} ` +
    `duration=${duration}s node=${process.version}`,
);
const upstream = await startFakeUpstream();
for (const scenario of scenarios.filter((candidate) => !only || candidate.name.includes(only))) {
  const { service, baseline } = await runScenario(scenario, upstream);
  console.log(`\n${scenario.name}`);
  console.log(
    `  service : ${fixed(service.requestsPerSecond, 0)} req/s  p50 ${service.p50Ms} ms  p99 ${service.p99Ms} ms  failures ${service.failures}`,
  );
  console.log(
    `  ${scenario.post ? 'no-op   ' : 'baseline'}: ${fixed(baseline.requestsPerSecond, 0)} req/s  p50 ${baseline.p50Ms} ms  p99 ${baseline.p99Ms} ms  failures ${baseline.failures}`,
  );
  console.log(
    `  ratio   : throughput ${fixed(service.requestsPerSecond / baseline.requestsPerSecond)} of baseline, ` +
      `p99 ${fixed(service.p99Ms / Math.max(baseline.p99Ms, 1))}x baseline`,
  );
  if (scenario.itemsPerRequest)
    console.log(`  items   : ${fixed(service.requestsPerSecond * scenario.itemsPerRequest, 0)} stored/s`);
}
await upstream.close();
