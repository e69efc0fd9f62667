#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { runCli } from './cli/run-cli.js';

// A .env file in the working directory, if any, fills variables the environment does not set.
if (existsSync('.env')) process.loadEnvFile('.env');

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
