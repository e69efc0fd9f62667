/** Rows one delete statement removes at most: small enough not to hold the database for long. */
export const DELETE_BATCH_ROWS = 1000;

/**
 * Deletes in bounded batches until a batch comes back short, or `stop` is aborted (the rest waits for the
 * next run): `deleteBatch(limit)` deletes up to `limit` rows and says how many it did. Requests get through
 * between batches (SQLite runs on this thread). How many rows it deleted in all.
 */
export async function deleteInBatches(
  deleteBatch: (limit: number) => Promise<number>,
  stop?: AbortSignal,
): Promise<number> {
  let deleted = 0;
  while (!stop?.aborted) {
    const batch = await deleteBatch(DELETE_BATCH_ROWS);
    deleted += batch;
    if (batch < DELETE_BATCH_ROWS) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return deleted;
}
