// The bench's moving parts: building and starting the servers under load, reading their CPU time and
// memory from /proc, and loading them (wrk, or autocannon without it).
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildSync } from 'esbuild';
import { hasWrk, type Measured, wrkLoad } from './wrk.js';

export const settings = {
  duration: Number(process.env.BENCH_DURATION_SECONDS ?? 10),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  only: process.env.BENCH_ONLY,
  /** Each side is measured this many times, in turns with the other, and its best run is kept. */
  rounds: Number(process.env.BENCH_ROUNDS ?? 2),
  /** The measured seconds of each point of the growth tables (many points: shorter than a scenario's). */
  growthDuration: Number(process.env.BENCH_GROWTH_SECONDS ?? 5),
} as const;

export const useWrk = hasWrk();
export const loadName = useWrk ? 'wrk' : 'autocannon';

/** What the service process says once it listens (the baseline says only its port). */
export interface ServerInfo {
  readonly port: number;
  /** A token of owner 1 carrying every grant. */
  readonly token?: string;
  /** With BENCH_TOKEN_OWNERS, one token for each owner, 1 to n. */
  readonly tokens?: readonly string[];
  /** The in-process cache's bound, bytes (CACHE_MEMORY_MAX_BYTES as the service read it). */
  readonly cacheMaxBytes?: number;
  /** UPSTREAM_OWNER_SHARE_PERCENT as the service read it. */
  readonly ownerSharePercent?: number;
  /** How long seeding pings and players took before it listened, ms. */
  readonly seedMs?: number;
  /** After seeding players, the process's memory once the seeding's garbage was collected (bytes). */
  readonly heldAfterSeeding?: NodeJS.MemoryUsage;
}

export interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly info: ServerInfo;
}

/**
 * The servers under load run as plain JavaScript, as production runs the build: transpiled once by esbuild
 * (as the tests are), not through tsx, whose loader keeps function names with a call per closure made.
 */
const BUILD = '.bench-build';
export function buildServers(): void {
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

export function start(server: 'service' | 'baseline', env: Record<string, string>): Promise<Started> {
  const script = join(BUILD, 'bench', 'servers', `${server}.js`);
  // BENCH_SERVICE_NODE_ARGS: Node's options for the service's process only (`--cpu-prof`, say).
  const nodeArgs =
    server === 'service' ? (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').once('data', (line: string) => {
      const info = JSON.parse(line) as ServerInfo;
      resolve({ child, url: `http://127.0.0.1:${info.port}`, info });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

export async function stop({ child }: Started): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** A line of the process's /proc status in MiB (`VmHWM`, `VmRSS`); undefined where /proc is not there. */
function statusMiB({ child }: Started, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kib = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
    return kib === undefined ? undefined : Number(kib) / 1024;
  } catch {
    return undefined;
  }
}

/** The process's peak resident memory so far (VmHWM), in MiB. */
export const peakRssMiB = (started: Started) => statusMiB(started, 'VmHWM');
/** The process's resident memory now (VmRSS), in MiB. */
export const rssMiB = (started: Started) => statusMiB(started, 'VmRSS');

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

export interface Sample {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** One GET as the load generator sends it, its body as sent on the wire (not decompressed). */
export function sampleOf(url: string, headers: Record<string, string>): Promise<Sample> {
  return new Promise((resolve, reject) => {
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

export type Loaded = Measured & { readonly cpuUsPerRequest?: number };

export interface LoadOptions {
  readonly headers: Record<string, string>;
  /** A wrk script making the requests (POSTs, or GETs of many paths), and its arguments. */
  readonly script?: string;
  readonly scriptArgs?: readonly string[];
  /** Measured seconds: the scenarios' duration unless given. */
  readonly seconds?: number;
  /** The scenarios' connections unless given. */
  readonly connections?: number;
  /** wrk threads (two unless given; one for a single connection). */
  readonly threads?: number;
}

/**
 * Loads `url`, after a short warm-up (the JIT and the connection pool settle), and measures it; with the
 * process answering, also its CPU time per request over the measured run: a figure the sharing of two
 * cores with the load generator disturbs less than throughput.
 */
export async function load(url: string, options: LoadOptions, answering: Started): Promise<Loaded> {
  const seconds = options.seconds ?? settings.duration;
  const connections = options.connections ?? settings.connections;
  const { headers } = options;
  let measured: Measured;
  let cpuBefore: number | undefined;
  if (useWrk) {
    const wrk = { ...options, connections, headers };
    await wrkLoad(url, { ...wrk, seconds: Math.min(3, seconds) });
    cpuBefore = cpuMs(answering);
    measured = await wrkLoad(url, { ...wrk, seconds });
  } else {
    if (options.script) throw new Error('scripted scenarios need wrk (apt-get install -y wrk)');
    await autocannon({ url, connections, duration: Math.min(3, seconds), headers });
    cpuBefore = cpuMs(answering);
    const result = await autocannon({ url, connections, duration: seconds, headers });
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
    cpuUsPerRequest: ((cpuAfter - cpuBefore) * 1000) / (measured.requestsPerSecond * seconds),
  };
}

/** The bearer header of a token, or nothing. */
export const bearer = (token: string | undefined): Record<string, string> =>
  token ? { authorization: `Bearer ${token}` } : {};
