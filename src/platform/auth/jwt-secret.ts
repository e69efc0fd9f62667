import { hkdfSync, randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createPrivateDirectory } from '../private-directory.js';
import { StartupError } from '../startup-error.js';

const SECRET_FILE = 'jwt-secret';
const GENERATED_SECRET_BYTES = 48;
/** HS256 is only as strong as its key: RFC 7518 asks for at least the hash size, 256 bits. */
export const MIN_JWT_SECRET_BYTES = 32;
/** Permission bits a secret file must not have (access by group or others). */
const GROUP_OR_OTHERS = 0o077;

/**
 * The JWT signing secret: JWT_SECRET when set (configuration requires it in production). Otherwise one is
 * generated once and kept in DATA_DIR/jwt-secret (the directory 0700, the file 0600), so that tokens
 * survive a restart. A kept file that is too short, or that group or others may read, is refused: anyone
 * who reads it can sign tokens.
 */
export async function resolveJwtSecret(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured) return configured;
  const path = resolve(join(dataDir, SECRET_FILE));
  try {
    return (await readSecret(path)) ?? (await generateSecret(path, dataDir));
  } catch (error) {
    if (error instanceof StartupError) throw error;
    throw new StartupError(
      `cannot keep the JWT secret in ${path}: ${(error as Error).message}; make DATA_DIR a directory the service may write, or set JWT_SECRET`,
      { cause: error },
    );
  }
}

async function generateSecret(path: string, dataDir: string): Promise<string> {
  createPrivateDirectory(dataDir);
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
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if ((await stat(path)).mode & GROUP_OR_OTHERS) {
    throw new StartupError(
      `the JWT secret file ${path} may be read by group or others: make it private (chmod 600 ${path}), or set JWT_SECRET`,
    );
  }
  const secret = text.trim();
  if (Buffer.byteLength(secret) < MIN_JWT_SECRET_BYTES) {
    throw new StartupError(
      `the JWT secret file ${path} holds ${Buffer.byteLength(secret)} bytes; a secret needs at least ${MIN_JWT_SECRET_BYTES}: delete the file to have one generated, or set JWT_SECRET`,
    );
  }
  return secret;
}

/**
 * A key for another purpose derived from the signing secret (HKDF-SHA256, the purpose as its info), so the
 * service has one secret to keep and each use its own key: knowing one derived key tells nothing of the
 * secret or of another key.
 */
export const deriveKey = (secret: string, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, '', purpose, 32));
