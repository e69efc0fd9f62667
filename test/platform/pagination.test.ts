import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InputError } from '../../src/platform/errors.js';
import { type PagePosition, readPage } from '../../src/platform/pagination.js';

/** Rows newest first, as a repository's `newestFirst` reads them: time, then id, descending. */
const rows = Array.from({ length: 7 }, (_, index) => ({
  at: 1_000 + Math.floor(index / 2),
  id: `00000000-0000-7000-8000-${String(index).padStart(12, '0')}`,
})).reverse();

const read = async (limit: number, after: PagePosition | undefined) =>
  rows
    .filter((row) => !after || row.at < after.at || (row.at === after.at && row.id < after.id))
    .slice(0, limit);
const page = (limit: number, cursor?: string) =>
  readPage({ limit, ...(cursor === undefined ? {} : { cursor }) }, read, (row) => row.at);

describe('keyset pages', () => {
  it('walks every row once, and gives no cursor on the last page, however exactly it is full', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const { items, nextCursor } = await page(2, cursor);
      seen.push(...items.map((row) => row.id));
      if (!nextCursor) break;
      cursor = nextCursor;
    }
    assert.deepEqual(
      seen,
      rows.map((row) => row.id),
    );
    // Seven rows: a page of exactly seven is the last; so is the page of the seventh after six.
    assert.equal((await page(7)).nextCursor, undefined);
    const six = await page(6);
    assert.ok(six.nextCursor);
    const rest = await page(1, six.nextCursor);
    assert.deepEqual(
      rest.items.map((row) => row.id),
      [rows[6]?.id],
    );
    assert.equal(rest.nextCursor, undefined, 'exactly full, and the last');
  });

  it('refuses a cursor it did not give: tampered, padded, or not base64url', async () => {
    const { nextCursor } = await page(2);
    const given = Buffer.from(String(nextCursor), 'base64url').toString('latin1');
    const encode = (text: string) => Buffer.from(text, 'latin1').toString('base64url');
    const uuid = given.split('.')[1] ?? '';
    for (const cursor of [
      encode(`x12.${'z'.repeat(36)}`),
      encode(`12.${'z'.repeat(36)}`),
      encode(`${given}junk`),
      encode(`junk${given}`),
      encode(`1234567890123456.${uuid}`),
      encode(`.${uuid}`),
      '%%%',
      '',
    ]) {
      await assert.rejects(page(2, cursor), (error: unknown) => {
        assert.ok(error instanceof InputError, `${cursor}: ${String(error)}`);
        assert.deepEqual(
          error.inputProblems.map((problem) => ('field' in problem ? problem.field : [])),
          [['cursor']],
        );
        return true;
      });
    }
  });
});
