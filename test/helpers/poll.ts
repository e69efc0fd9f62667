import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` every `everyMs` until it holds; throws naming `what` when it has not within `withinMs` (a
 * wide bound: it shows something does not hang, it does not measure speed).
 */
export async function eventually(
  what: string,
  check: () => Promise<boolean> | boolean,
  { withinMs = 10_000, everyMs = 20 }: { withinMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(everyMs);
  }
}
