import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Creates a directory and whichever of its parents are missing, each readable by the service's user only
 * (0700); directories that exist are left as their owner set them. One level at a time rather than
 * `mkdirSync(..., { recursive: true })`: Node's recursive creation never returns under a directory that
 * refuses new entries without saying so as it should (`/proc/nope` spins at full CPU), where creating one
 * level fails at once with the reason (ENOENT, EACCES, ENOTDIR), which start-up then reports.
 */
export function createPrivateDirectory(path: string): void {
  const directory = resolve(path);
  if (existsSync(directory)) return;
  const parent = dirname(directory);
  if (parent !== directory) createPrivateDirectory(parent);
  try {
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    // Another process (a second instance starting, the command line) made it in between.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
