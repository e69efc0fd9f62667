import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type Closer, deferClose } from './build-test-app.js';
import { testRedisUrl } from './environment.js';

/** Deletes every key under `prefix` (no glob characters in it), a batch at a time. */
export async function dropRedisKeys(client: Redis, prefix: string): Promise<void> {
  for await (const keys of client.scanStream({ match: `${prefix}*`, count: 500 })) {
    if ((keys as string[]).length > 0) await client.unlink(...(keys as string[]));
  }
}

/** Deletes every key under `prefix` in the test Redis, through a connection of its own. */
async function dropTestKeys(prefix: string): Promise<void> {
  if (!testRedisUrl) return;
  const client = new Redis(testRedisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
  });
  try {
    await client.connect();
    await dropRedisKeys(client, prefix);
  } finally {
    client.disconnect();
  }
}

/**
 * A Redis key prefix of its own (`test:<hex>:`): a deployment's key space that no other test meets. Its
 * keys are deleted when `t` ends, after whatever `t` opened later (the apps using it) has closed.
 */
export function freshKeyPrefix(t: Closer): string {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  deferClose(t, () => dropTestKeys(prefix));
  return prefix;
}

/**
 * Key spaces for a file's suites under one label (`test:quota:<run>:<n>:`), all deleted at once by `drop`
 * (call it in the file's `after`, before its Redis connection quits).
 */
export function keySpaces(label: string): { fresh(): string; drop(client: Redis): Promise<void> } {
  const run = `test:${label}:${randomBytes(6).toString('hex')}:`;
  let count = 0;
  return {
    fresh: () => `${run}${count++}:`,
    drop: (client) => dropRedisKeys(client, run),
  };
}
