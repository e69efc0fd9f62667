import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.js';
import { StartupError } from './platform/startup-error.js';
import { startServer } from './server.js';

// A .env file in the working directory, if any, fills variables the environment does not set.
if (existsSync('.env')) process.loadEnvFile('.env');

try {
  await startServer(loadConfig(process.env));
} catch (error) {
  process.stderr.write(`${startFailure(error)}\n`);
  process.exit(1);
}

/**
 * What a failed start prints on stderr: the message of a failure that explains itself (configuration,
 * database, address), one line; anything else is a bug, shown with its stack.
 */
function startFailure(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof StartupError) return `could not start: ${error.message}`;
  return `could not start: ${(error as Error)?.stack ?? String(error)}`;
}
