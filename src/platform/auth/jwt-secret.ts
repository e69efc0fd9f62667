import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const SECRET_FILE = 'jwt-secret';
const GENERATED_SECRET_BYTES = 48;

/**
 * The JWT signing secret: JWT_SECRET when set (configuration requires it in production). Otherwise one is
 * generated once and kept in DATA_DIR/jwt-secret (mode 0600), so that tokens survive a restart.
 */
export async function resolveJwtSecret(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured) return configured;
  const path = join(dataDir, SECRET_FILE);
  const existing = await readSecret(path);
  if (existing) return existing;
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(GENERATED_SECRET_BYTES).toString('base64url');
  try {
    await writeFile(path, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    // Another instance wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return (await readSecret(path)) ?? secret;
    throw error;
  }
}

async function readSecret(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
