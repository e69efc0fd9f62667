/*
 * Player history: what a snapshot costs to store, and what a history read costs as snapshots pile up.
 * In process, on SQLite (a fresh file), through the service the players module uses; no HTTP (the read's
 * HTTP cost is a small fixed part, measured by the other benches). `BENCH_ONLY='player history' npm run bench`,
 * or `npm run bench:history` for this section alone (printed, nothing written).
 *
 * - bytes stored per snapshot for a typical change (a game of Bed Wars: its counters, the network
 *   experience, the login times) of each fixture player, against the player's size;
 * - CPU per history read (100 points, 5 fields) over a tenth of a year of hourly snapshots, a year, two:
 *   the goal is a cost that grows with the points returned, not with the snapshots stored.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { migrations } from '../src/migrations.js';
import { createPlayerHistoryService } from '../src/modules/players/player-history.service.js';
import { createDatabase } from '../src/platform/db/database.js';
import { migrateToLatest } from '../src/platform/db/migrator.js';
import { executorOf } from '../src/platform/db/transactions.js';

const HOUR_MS = 3_600_000;
const YEAR_START = Date.UTC(2026, 0, 1);
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../test/fixtures/hypixel/${name}`, import.meta.url), 'utf8'))
    .player as Record<string, unknown> & { stats: { Bedwars: Record<string, unknown> } };

/** One game of Bed Wars: each numeric counter of the mode's first 20 goes up, and the player's times move. */
function playGame(player: ReturnType<typeof fixture>, game: number, at: number) {
  const bedwars = player.stats.Bedwars;
  let counters = 0;
  for (const key of Object.keys(bedwars)) {
    if (typeof bedwars[key] === 'number' && counters < 20) {
      bedwars[key] = (bedwars[key] as number) + 1 + (game % 3);
      counters += 1;
    }
  }
  player.networkExp = Number(player.networkExp ?? 0) + 250;
  player.lastLogin = at - HOUR_MS / 2;
  player.lastLogout = at;
}

async function withService<T>(
  work: (
    service: ReturnType<typeof createPlayerHistoryService>,
    db: ReturnType<typeof createDatabase>,
  ) => Promise<T>,
) {
  const dir = mkdtempSync(join(tmpdir(), 'pds-bench-history-'));
  const config = loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'history.sqlite')}` });
  const db = createDatabase(config.database);
  try {
    await migrateToLatest(db, migrations);
    const service = createPlayerHistoryService({
      db: executorOf(db),
      settings: { retentionDays: 3650 },
      uuidOf: async (player) => player,
      now: () => YEAR_START + 400 * 24 * HOUR_MS,
    });
    return await work(service, db);
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const HISTORY = 'player history';

interface Stored {
  readonly name: string;
  readonly playerBytes: number;
  readonly snapshots: number;
  readonly fullCopies: number;
  readonly bytesPerSnapshot: number;
  readonly cpuMsPerSnapshot: number;
}

interface Read {
  readonly snapshots: number;
  readonly cpuMsPerRead: number;
}

export interface HistoryFigures {
  readonly stored: readonly Stored[];
  readonly reads: readonly Read[];
}

async function storedBytes(name: string, snapshots: number): Promise<Stored> {
  return withService(async (service, db) => {
    const player = fixture(name);
    const playerBytes = Buffer.byteLength(JSON.stringify(player));
    const cpu = process.cpuUsage();
    for (let game = 0; game < snapshots; game++) {
      const at = YEAR_START + game * HOUR_MS;
      playGame(player, game, at);
      await service.record(executorOf(db), 'p', JSON.stringify(player), at, 1n);
    }
    const used = process.cpuUsage(cpu);
    const { bytes, full } = (
      await sql<{ bytes: number; full: number }>`select sum(length(body)) as bytes,
        sum(case when seq = base_seq then 1 else 0 end) as full from player_history`.execute(db)
    ).rows[0] as { bytes: number; full: number };
    return {
      name,
      playerBytes,
      snapshots,
      fullCopies: Number(full),
      bytesPerSnapshot: Number(bytes) / snapshots,
      cpuMsPerSnapshot: (used.user + used.system) / 1000 / snapshots,
    };
  });
}

async function readCost(snapshots: number): Promise<Read> {
  return withService(async (service, db) => {
    const player = fixture('player.json');
    for (let game = 0; game < snapshots; game++) {
      const at = YEAR_START + game * HOUR_MS;
      playGame(player, game, at);
      await service.record(executorOf(db), 'p', JSON.stringify(player), at, 1n);
    }
    const fields = Object.keys(player.stats.Bedwars)
      .slice(0, 4)
      .map((key) => `/stats/Bedwars/${key}`)
      .concat('/networkExp');
    const read = () => service.historyOf('p', { fields, limit: 100 }, 1n);
    for (let warm = 0; warm < 5; warm++) await read();
    const reads = 50;
    const cpu = process.cpuUsage();
    for (let index = 0; index < reads; index++) await read();
    const used = process.cpuUsage(cpu);
    return { snapshots, cpuMsPerRead: (used.user + used.system) / 1000 / reads };
  });
}

export async function runHistory(): Promise<HistoryFigures> {
  return {
    stored: [await storedBytes('player.json', 500), await storedBytes('player-large.json', 200)],
    reads: [await readCost(876), await readCost(8760), await readCost(17_520)],
  };
}

const fixed = (value: number, digits = 0) => value.toFixed(digits);

export function historySection({ stored, reads }: HistoryFigures): string {
  const [tenth, year, twoYears] = reads as [Read, Read, Read];
  return [
    '## Player history: bytes per snapshot and the cost of a read',
    '',
    'In process on SQLite, through the history service (bench/history.ts), on a fresh database each. A "game" is what ' +
      "a game of Bed Wars changes: 20 of the mode's counters, the network experience and the two login times, one " +
      'snapshot an hour. The CPU to store one is the whole record (its transaction, the diff, the compression).',
    '',
    '| player | size | snapshots | full copies | bytes per snapshot | of the player | CPU ms to store one |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...stored.map(
      (row) =>
        `| ${row.name} | ${row.playerBytes} | ${row.snapshots} | ${row.fullCopies} | ${fixed(row.bytesPerSnapshot)} | ` +
        `${fixed((100 * row.bytesPerSnapshot) / row.playerBytes, 1)} % | ${fixed(row.cpuMsPerSnapshot, 2)} |`,
    ),
    '',
    '| a read of 100 points x 5 fields, over | CPU ms per read |',
    '| --- | --- |',
    ...reads.map((read) => `| ${read.snapshots} hourly snapshots | ${fixed(read.cpuMsPerRead, 1)} |`),
    '',
    `- Storage: a typical change costs ${fixed((100 * (stored[0]?.bytesPerSnapshot ?? 0)) / (stored[0]?.playerBytes ?? 1), 1)} % of the player (the goal: under 10 %).`,
    `- Reads: ${fixed(year.cpuMsPerRead / tenth.cpuMsPerRead, 2)}x for 10x the snapshots (a tenth of a year to a year), ` +
      `${fixed(twoYears.cpuMsPerRead / year.cpuMsPerRead, 2)}x for 2x more (a year to two). A point reads its own row ` +
      'and its full copy, never what lies between: the cost grows until each point falls on a full copy of its own, ' +
      'then stays (about one full copy read per point, whatever the number of snapshots).',
  ].join('\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  console.log(historySection(await runHistory()));
}
