import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';

/** What one load run measured. */
export interface Measured {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly failures: number;
}

/** Whether `wrk` (a C load generator: `apt-get install -y wrk`) is installed. */
export function hasWrk(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk prints its version and exits 1; only a missing binary is ENOENT.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** How long wrk waits for an answer before it counts a failure. */
const WRK_TIMEOUT_SECONDS = 30;

const MS_PER_UNIT: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

/** `1.23ms`, `850.00us`, `1.02s` in milliseconds. */
function milliseconds(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? '');
  if (!match?.[1] || !match[2]) throw new Error(`wrk printed a latency it cannot read: ${text}`);
  return Number(match[1]) * (MS_PER_UNIT[match[2]] ?? Number.NaN);
}

export interface WrkOptions {
  readonly connections: number;
  readonly seconds: number;
  readonly headers: Record<string, string>;
  /** A wrk Lua script making the requests. */
  readonly script?: string;
  /** The script's arguments: a nonce of this run unless given. */
  readonly scriptArgs?: readonly string[];
  /** wrk's threads: two (one per core of the machines it runs on) unless given; at most `connections`. */
  readonly threads?: number;
}

/** Runs wrk on `url` for `seconds` (GETs, or what `script` makes) and gives its report as it printed it. */
export async function wrkOutput(url: string, options: WrkOptions): Promise<string> {
  const { connections, seconds, headers, script } = options;
  const threads = Math.min(options.threads ?? 2, connections);
  // wrk gives up on an answer after 2 s by default and counts it as a failure, left out of the latencies:
  // a slow answer (a year of ping history under 50 connections) is a latency to report, not an error.
  const args = [
    `-t${threads}`,
    `-c${connections}`,
    `-d${seconds}s`,
    '--latency',
    `--timeout`,
    `${WRK_TIMEOUT_SECONDS}s`,
  ];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  if (script) args.push('-s', script);
  const scriptArgs = script ? ['--', ...(options.scriptArgs ?? [randomUUID()])] : [];
  const { stdout } = await promisify(execFile)('wrk', [...args, url, ...scriptArgs]);
  return stdout;
}

/** What wrk's report says: requests per second, the latency percentiles, and failures (non-2xx, socket errors). */
export function measuredOf(stdout: string): Measured {
  const percentile = (p: string) => milliseconds(new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1]);
  const count = (pattern: RegExp) => [...stdout.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]),
    p50Ms: percentile('50'),
    p99Ms: percentile('99'),
    failures: count(/Non-2xx or 3xx responses: (\d+)/g) + count(/(?:connect|read|write|timeout) (\d+)/g),
  };
}

/** Loads `url` with wrk and reads its report. */
export async function wrkLoad(url: string, options: WrkOptions): Promise<Measured> {
  return measuredOf(await wrkOutput(url, options));
}
