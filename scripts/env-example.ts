// Writes .env.example from the environment schema (src/config-env.ts) and README.md's configuration table.
import { readFileSync, writeFileSync } from 'node:fs';
import { envExample } from '../src/config-env-example.js';

writeFileSync('.env.example', envExample(readFileSync('README.md', 'utf8')));
console.log('wrote .env.example');
