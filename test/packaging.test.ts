import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { EnvSchema } from '../src/config-env.js';
import { envExample } from '../src/config-env-example.js';

const run = promisify(execFile);
const packageJson = JSON.parse(readFileSync('package.json', 'utf8'));

/** The variables a .env-style text sets (commented lines set nothing). */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (match?.[1] !== undefined) env[match[1]] = match[2] ?? '';
  }
  return env;
}

describe('.env.example', () => {
  it('is what `npm run env:example` writes from the schema and the README (run it after changing either)', () => {
    const written = readFileSync('.env.example', 'utf8');
    assert.equal(written, envExample(readFileSync('README.md', 'utf8')), 'run `npm run env:example`');
  });

  it('names every variable of the schema, each with a meaning, and only those', () => {
    const written = readFileSync('.env.example', 'utf8');
    const named = [...written.matchAll(/^(?:# )?([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]);
    assert.deepEqual(named, Object.keys(EnvSchema.properties));
    for (const block of written.split('\n\n').slice(1)) {
      assert.match(block, /^# \S.*\n(# )?[A-Z0-9_]+=/, `a meaning above each variable: ${block}`);
    }
  });

  it('sets every default as the service reads it: loaded, it changes nothing', () => {
    const base = { JWT_SECRET: 'a-secret-of-at-least-thirty-two-bytes!!' };
    const fromFile = loadConfig({ ...parseEnv(readFileSync('.env.example', 'utf8')), ...base });
    assert.deepEqual(fromFile, loadConfig(base));
  });

  it('fails to generate when a variable has no line in the README table', () => {
    const readme = readFileSync('README.md', 'utf8').replace(/^\| `PING_RETENTION_DAYS` .*\n/m, '');
    assert.throws(() => envExample(readme), /PING_RETENTION_DAYS has no line/);
  });
});

describe('packaging', () => {
  it('declares Node 20.18 or later', () => {
    assert.equal(packageJson.engines.node, '>=20.18');
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    assert.ok(major > 20 || (major === 20 && minor >= 18), `running on ${process.version}`);
  });

  it('runs the command line as `player-data-service` once built (the bin, its shebang)', async (t) => {
    assert.equal(packageJson.bin['player-data-service'], 'dist/cli.js');
    // The build as `npm run build` makes it (tsconfig.build.json: src/ to dist/), into a folder of the test's
    // own inside the project (so that node_modules resolves), not over the dist/ a developer may be running.
    const out = join('.test-build', 'packaged-dist');
    rmSync(out, { recursive: true, force: true });
    t.after(() => rmSync(out, { recursive: true, force: true }));
    await run(process.execPath, [
      'node_modules/typescript/bin/tsc',
      '-p',
      'tsconfig.build.json',
      '--outDir',
      out,
    ]);
    const bin = join(out, packageJson.bin['player-data-service'].replace(/^dist\//, ''));
    assert.equal(readFileSync(bin, 'utf8').split('\n')[0], '#!/usr/bin/env node');
    // npm makes a bin executable when it installs or links the package; the file itself is run, not node.
    chmodSync(bin, 0o755);
    const help = await run(bin, ['--help'], { env: { ...process.env, DATA_DIR: join(out, 'data') } });
    assert.match(help.stdout, /migrate/);
    const version = await run(bin, ['--version']);
    assert.equal(version.stdout.trim(), packageJson.version);
  });
});
