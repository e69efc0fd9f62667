// Runs every scenario (or those whose name contains BENCH_ONLY) against the service and the baseline,
// one after the other in this one run, and prints throughput and latency with their ratios; then the growth
// points (bench/growth.ts: how cost grows with work). It writes bench/results/latest.json and, on a full run
// (no BENCH_ONLY), docs/performance.md; a partial run writes its report to bench/results/performance.md.
//   npm run bench            BENCH_DURATION_SECONDS (default 10), BENCH_CONNECTIONS (default 50),
//                            BENCH_ROUNDS (default 2: each side measured twice, in turns, its best kept),
//                            BENCH_GROWTH_SECONDS (default 5: each growth point)
//   BENCH_ONLY=growth npm run bench     only the growth points
//   BENCH_ONLY='fair share' npm run bench   only one owner flooding while another reads (bench/fair-share.ts)
//   BENCH_ONLY='bulk reads' npm run bench   only 100 cached players in one POST /players against single reads (bench/bulk.ts)
//   BENCH_ONLY='player history' npm run bench   only the bytes per snapshot and a history read's cost (bench/history.ts)
// The load comes from wrk when it is installed (`apt-get install -y wrk`): autocannon, in JavaScript,
// saturates near 10k req/s on two cores and so flatters every ratio; it is used only without wrk.
import { mkdirSync, writeFileSync } from 'node:fs';
import { startFakeUpstream } from '../test/helpers/fake-upstream.js';
import { BULK, type BulkReads, bulkSection, runBulk } from './bulk.js';
import { type Outcome, runScenario } from './compare.js';
import { FAIR_SHARE, type FairShare, fairShareSection, runFairShare } from './fair-share.js';
import { type Growth, runGrowth } from './growth.js';
import { buildServers, type Loaded, loadName, settings, useWrk } from './harness.js';
import { HISTORY, type HistoryFigures, historySection, runHistory } from './history.js';
import { machineNow, markRunEnd, renderReport } from './report.js';
import { scenarios } from './scenarios.js';

const { duration, connections, only, rounds } = settings;
const selected = (name: string) => !only || name.includes(only);

const fixed = (value: number, digits = 2) => value.toFixed(digits);
const cpuText = ({ cpuUsPerRequest }: Loaded) =>
  cpuUsPerRequest === undefined ? '' : `  CPU ${fixed(cpuUsPerRequest, 0)} us/req`;

function printOutcome(outcome: Outcome): void {
  const { service, baseline } = outcome;
  console.log(`\n${outcome.scenario}`);
  console.log(
    `  service : ${fixed(service.requestsPerSecond, 0)} req/s  p50 ${service.p50Ms} ms  p99 ${service.p99Ms} ms  failures ${service.failures}` +
      cpuText(service) +
      (outcome.serviceRssMiB === undefined ? '' : `  peak RSS ${fixed(outcome.serviceRssMiB, 0)} MiB`),
  );
  console.log(
    `  ${outcome.post ? 'no-op   ' : 'baseline'}: ${fixed(baseline.requestsPerSecond, 0)} req/s  p50 ${baseline.p50Ms} ms  p99 ${baseline.p99Ms} ms  failures ${baseline.failures}` +
      cpuText(baseline),
  );
  console.log(
    `  ratio   : throughput ${fixed(service.requestsPerSecond / baseline.requestsPerSecond)} of baseline, ` +
      `p99 ${fixed(service.p99Ms / Math.max(baseline.p99Ms, 1))}x baseline`,
  );
  if (outcome.identityBytes)
    console.log(
      `  wire    : ${outcome.bodyBytes} bytes, ${fixed(((outcome.bodyBytes ?? 0) / outcome.identityBytes) * 100, 1)}% of ${outcome.identityBytes}` +
        (outcome.smallestBytes
          ? `, ${fixed((outcome.bodyBytes ?? 0) / outcome.smallestBytes)}x the smallest (${outcome.smallestBytes})`
          : ''),
    );
  if (outcome.itemsPerRequest)
    console.log(`  items   : ${fixed(service.requestsPerSecond * outcome.itemsPerRequest, 0)} stored/s`);
}

function printTable(outcomes: readonly Outcome[]): void {
  console.log(
    '\n| scenario | service req/s | baseline req/s | ratio | p50 ms | p99 ms | p99 ratio | CPU us/req (baseline) | peak RSS MiB |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  const cpuCell = (service: Loaded, baseline: Loaded) =>
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
}

/** `npm run bench`, with the BENCH_* variables this run was given in front: the report's command. */
function commandLine(): string {
  const given = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_') && !name.endsWith('_URL'))
    .map(([name, value = '']) => `${name}=${/^[\w.,:/-]*$/.test(value) ? value : `'${value}'`}`)
    .sort();
  return [...given, 'npm run bench'].join(' ');
}

console.log(
  `load=${loadName} connections=${connections} duration=${duration}s rounds=${rounds} (best of each side kept) node=${process.version}` +
    (useWrk
      ? ''
      : '\n*** wrk is not installed: autocannon (JavaScript) shares the cores and saturates near 10k req/s, so ' +
        'the baselines are under-measured and every ratio below is compressed towards 1. ' +
        'Install wrk (apt-get install -y wrk) for honest figures. ***'),
);
const machine = machineNow(useWrk);
const startedAt = new Date();
buildServers();
const upstream = await startFakeUpstream();
const outcomes: Outcome[] = [];
for (const scenario of scenarios.filter((candidate) => selected(candidate.name))) {
  const outcome = await runScenario(scenario, upstream);
  outcomes.push(outcome);
  printOutcome(outcome);
}
if (outcomes.length > 0) printTable(outcomes);

let growth: Growth = {};
let fairShare: FairShare | undefined;
let bulk: BulkReads | undefined;
let history: HistoryFigures | undefined;
if (selected(HISTORY)) {
  history = await runHistory();
  console.log(`\n${historySection(history)}`);
}
if (useWrk) {
  console.log('');
  growth = await runGrowth(upstream, selected);
  if (selected(FAIR_SHARE)) {
    fairShare = await runFairShare(upstream);
    console.log(`\n${fairShareSection(fairShare)}`);
  }
  if (selected(BULK)) {
    bulk = await runBulk();
    console.log(`\n${bulkSection(bulk)}`);
  }
} else
  console.log('\nthe growth points and fair share need wrk (their requests come from wrk scripts): skipped');
await upstream.close();
markRunEnd(machine);

mkdirSync('bench/results', { recursive: true });
const results = {
  at: startedAt.toISOString(),
  load: loadName,
  connections,
  durationSeconds: duration,
  rounds,
  growthSeconds: settings.growthDuration,
  node: process.version,
  machine,
  outcomes,
  growth,
  fairShare,
  bulk,
  history,
};
writeFileSync('bench/results/latest.json', `${JSON.stringify(results, null, 2)}\n`);
// Only a full run may stand as the report: a partial one would replace it with some of its tables.
const reportPath = only ? 'bench/results/performance.md' : 'docs/performance.md';
writeFileSync(
  reportPath,
  renderReport({
    at: startedAt,
    command: commandLine(),
    machine,
    connections,
    durationSeconds: duration,
    rounds,
    growthSeconds: settings.growthDuration,
    outcomes,
    growth,
    ...(fairShare ? { fairShare } : {}),
    ...(bulk ? { bulk } : {}),
    ...(history ? { history } : {}),
  }),
);
console.log(`\nwritten to bench/results/latest.json and ${reportPath}`);
