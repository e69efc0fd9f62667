/** Rows one delete statement removes at most: small enough not to hold the database for long. */
export const DELETE_BATCH_ROWS = 1000;

/**
 * Deletes in bounded batches until a batch comes back short: `deleteBatch(limit)` deletes up to `limit`
 * rows and says how many it did. Requests get through between batches (SQLite runs on this thread).
 * How many rows it deleted in all.
 */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const batch = await deleteBatch(DELETE_BATCH_ROWS);
    deleted += batch;
    if (batch < DELETE_BATCH_ROWS) return deleted;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
