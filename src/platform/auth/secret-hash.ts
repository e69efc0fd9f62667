import { createHash } from 'node:crypto';

/**
 * How a high-entropy secret of the service's own making (an application key, a session id, a sign-in's
 * state) is stored and looked up: its SHA-256, hex. Such a secret has 256 random bits, so a fast hash is
 * enough; a password would need a slow one.
 */
export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');
