/*
 * Player history: what a snapshot costs to store, and what a history read costs as snapshots pile up.
 * In process, on SQLite (a fresh file), through the service the players module uses; no HTTP (the read's
 * HTTP cost is a small fixed part, measured by the other benches). `npm run bench:history`.
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

async function storedBytes(name: string, snapshots: number) {
  return withService(async (service, db) => {
    const player = fixture(name);
    const size = Buffer.byteLength(JSON.stringify(player));
    const cpu = process.cpuUsage();
    for (let game = 0; game < snapshots; game++) {
      const at = YEAR_START + game * HOUR_MS;
      playGame(player, game, at);
      await service.record(executorOf(db), 'p', JSON.stringify(player), at, 1n);
    }
    const { bytes, full } = (
      await sql<{ bytes: number; full: number }>`select sum(length(body)) as bytes,
        sum(case when seq = base_seq then 1 else 0 end) as full from player_history`.execute(db)
    ).rows[0] as { bytes: number; full: number };
    const used = process.cpuUsage(cpu);
    const perSnapshot = Number(bytes) / snapshots;
    console.log(
      `${name}: ${size} bytes; ${snapshots} snapshots, ${full} full copies; ${Math.round(perSnapshot)} bytes per snapshot = ${((100 * perSnapshot) / size).toFixed(1)} % of the player; ${((used.user + used.system) / 1000 / snapshots).toFixed(2)} ms CPU to store one (with the transaction)`,
    );
  });
}

async function readCost(snapshots: number) {
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
    const started = performance.now();
    for (let index = 0; index < reads; index++) await read();
    const used = process.cpuUsage(cpu);
    const perReadMs = (used.user + used.system) / 1000 / reads;
    console.log(
      `history read, 100 points x 5 fields over ${snapshots} hourly snapshots: ${perReadMs.toFixed(2)} ms CPU per read (${((performance.now() - started) / reads).toFixed(2)} ms wall)`,
    );
    return perReadMs;
  });
}

await storedBytes('player.json', 500);
await storedBytes('player-large.json', 200);
const tenth = await readCost(876);
const year = await readCost(8760);
const twoYears = await readCost(17_520);
console.log(
  `a year's read costs ${(year / tenth).toFixed(2)}x a tenth of a year's (10x the snapshots); two years' ${(twoYears / year).toFixed(2)}x a year's (2x)`,
);
