import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DELETE_BATCH_ROWS, deleteInBatches } from '../../../src/platform/db/batched-delete.js';

describe('deleting in batches', () => {
  it('deletes batch after batch until one comes back short', async () => {
    let left = 2 * DELETE_BATCH_ROWS + 7;
    const asked: number[] = [];
    const deleted = await deleteInBatches(async (limit) => {
      asked.push(limit);
      const batch = Math.min(limit, left);
      left -= batch;
      return batch;
    });
    assert.equal(deleted, 2 * DELETE_BATCH_ROWS + 7);
    assert.deepEqual(asked, [DELETE_BATCH_ROWS, DELETE_BATCH_ROWS, DELETE_BATCH_ROWS]);
  });

  it('stops after the batch under way once told to, leaving the rest', async () => {
    const stop = new AbortController();
    let batches = 0;
    const deleted = await deleteInBatches(async (limit) => {
      batches++;
      if (batches === 2) stop.abort();
      return limit;
    }, stop.signal);
    assert.equal(batches, 2);
    assert.equal(deleted, 2 * DELETE_BATCH_ROWS);
  });
});
