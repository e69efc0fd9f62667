import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.js';
import { startServer } from './server.js';

// A .env file in the working directory, if any, fills variables the environment does not set.
if (existsSync('.env')) process.loadEnvFile('.env');

try {
  await startServer(loadConfig(process.env));
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError ? error.message : (error as Error).stack}\n`);
  process.exit(1);
}
