import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import {
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  deflateRawSync,
  inflateRawSync,
} from 'node:zlib';
import { parseJsonExact, stringifyExact } from '../../platform/json.js';
import { type JsonChange, type ParsedChanges, parseChanges } from '../../platform/json-changes.js';
import type { HistoryRow } from './player-history.repository.js';

/*
 * How a snapshot is kept: a full copy is the player's JSON text under Brotli; changes are the JSON list of
 * changes from the full copy (json-changes.ts) under raw DEFLATE. Two snapshots are equal when the digests
 * of their changes against the same full copy are.
 */

/** How hard Brotli works on a full copy: 5 gives within 1 % of 11's size at a fraction of the time. */
const BROTLI_QUALITY = 5;
/** A new full copy once the changes kept since the last one cost this many times its size. */
export const FULL_COPY_FACTOR = 2;
/** How many full copies a read parses before it lets other requests run. */
const FULL_COPIES_PER_TURN = 8;

export const digestOf = (changesText: string) => createHash('sha256').update(changesText).digest('base64url');
export const NO_CHANGES = stringifyExact([]);

export const compressFull = (json: string) =>
  brotliCompressSync(json, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } });
/** What a read went through: the bytes of the full copies it parsed (the most of its cost). */
export interface ReadMeter {
  fullCopyBytes: number;
}

export const readFull = (row: HistoryRow, meter?: ReadMeter): unknown => {
  const text = brotliDecompressSync(row.body);
  if (meter) meter.fullCopyBytes += text.length;
  return parseJsonExact(text.toString('utf8'));
};
const readChanges = (row: HistoryRow): ParsedChanges =>
  parseChanges(parseJsonExact(inflateRawSync(row.body).toString('utf8')) as JsonChange[]);
const isFull = (row: HistoryRow) => row.baseSeq === row.seq;

/** A snapshot's changes, as stored. */
export const compressChanges = (changesText: string) => deflateRawSync(changesText);

/** Where the snapshot rows of a player are read from, by seq (the history repository). */
export interface SnapshotRows {
  rows(uuid: string, seqs: readonly number[]): Promise<HistoryRow[]>;
}

/** The full copies the rows refer to, parsed, by seq (those among the rows are not read again). */
async function basesOf(
  repository: SnapshotRows,
  uuid: string,
  rows: readonly HistoryRow[],
  meter: ReadMeter,
): Promise<Map<number, unknown>> {
  const fulls = rows.filter(isFull);
  const missing = [...new Set(rows.map((row) => row.baseSeq))].filter(
    (seq) => !fulls.some((row) => row.seq === seq),
  );
  fulls.push(...(await repository.rows(uuid, missing)));
  const bases = new Map<number, unknown>();
  for (const [index, row] of fulls.entries()) {
    // Reading a full copy takes most of a millisecond: other requests get a turn between a few.
    if (index > 0 && index % FULL_COPIES_PER_TURN === 0) await setImmediate();
    bases.set(row.seq, readFull(row, meter));
  }
  return bases;
}

/** Each row's document, as a full copy and the changes over it (undefined: its full copy is gone). */
export async function documentsOf(
  repository: SnapshotRows,
  uuid: string,
  rows: readonly HistoryRow[],
  meter: ReadMeter,
) {
  const bases = await basesOf(repository, uuid, rows, meter);
  return rows.map((row) => {
    const base = bases.get(row.baseSeq);
    return {
      row,
      base,
      changes: isFull(row) || base === undefined ? parseChanges([]) : readChanges(row),
    };
  });
}
