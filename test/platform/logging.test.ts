import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, mkdtempSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REDACTED, redactSecrets, redactUrl } from '../../src/platform/logger.js';
import { buildTestApp } from '../helpers/build-test-app.js';
import { nodeArgs } from '../helpers/node-process.js';

const SECRETS = [
  'eyJhbGciOiJIUzI1NiJ9.secret-jwt',
  'interaction-secret-xyz',
  'body-token-abc',
  'query-token-def',
];

describe('logging', () => {
  it('redacts secret-named keys at any depth and leaves other objects untouched', () => {
    const clean = { a: 1, b: [{ c: 'd' }] };
    assert.equal(redactSecrets(clean), clean);
    assert.deepEqual(
      redactSecrets({
        headers: { Authorization: 'Bearer x' },
        deep: [{ interaction: { interaction_token: 'y' } }],
        token: 'z',
      }),
      {
        headers: { Authorization: REDACTED },
        deep: [{ interaction: { interaction_token: REDACTED } }],
        token: REDACTED,
      },
    );
    assert.equal(redactUrl('/a?x=1&token=abc&Token=d'), `/a?x=1&token=${REDACTED}&Token=${REDACTED}`);
    assert.equal(
      redactUrl('/auth/discord/callback?state=s3cr3t&code=c0de&extra=1'),
      `/auth/discord/callback?state=${REDACTED}&code=${REDACTED}&extra=1`,
      "a sign-in's code and state",
    );
    assert.equal(
      redactUrl('/a?apikey=1&sig=2&X-Amz-Signature=3&my_jwt=4&Auth=5&user_id=6&limit=7&cursor=8'),
      `/a?apikey=${REDACTED}&sig=${REDACTED}&X-Amz-Signature=${REDACTED}&my_jwt=${REDACTED}&Auth=${REDACTED}&user_id=6&limit=7&cursor=8`,
      'a credential under a name of the client',
    );
    // A hostile review's ways past a name: other separators, decorated names, a credential by its shape.
    const key = `pds_${'K'.repeat(43)}`;
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    const cases: [string, string][] = [
      ['/auth/discord/callback;code=c0de', `/auth/discord/callback;code=${REDACTED}`],
      ['/auth/discord/callback?x=1?code=c0de', `/auth/discord/callback?x=1?code=${REDACTED}`],
      [
        '/auth/discord/callback?code%00=c0de&code[x]=c0de',
        `/auth/discord/callback?code%00=${REDACTED}&code[x]=${REDACTED}`,
      ],
      [`/auth/me?access=${jwt}&limit=5`, `/auth/me?access=${REDACTED}&limit=5`],
      [`/auth/me?k=${key}`, `/auth/me?k=${REDACTED}`],
      [`/nope/${key}/x`, `/nope/${REDACTED}/x`],
      [`/portal/?${key}`, `/portal/?${REDACTED}`],
      [
        '/player/20934ef9488c465180a78f861586b4cf?limit=5&cursor=abc',
        '/player/20934ef9488c465180a78f861586b4cf?limit=5&cursor=abc',
      ],
    ];
    for (const [url, logged] of cases) assert.equal(redactUrl(url), logged, url);
  });

  it('writes one JSON line per request with route, status and duration, and never a secret', async (t) => {
    const { app, logs } = await buildTestApp(t);
    // What a careless handler might log: the headers and the whole body.
    app.post('/test/careless', async (request) => {
      request.log.info({ headers: request.headers, body: request.body }, 'received');
      throw Object.assign(new Error('failed'), { details: request.body });
    });
    const reply = await app.inject({
      method: 'POST',
      url: `/test/careless?token=${SECRETS[3]}`,
      headers: { authorization: `Bearer ${SECRETS[0]}`, 'x-request-id': 'log-test-1' },
      payload: { interaction: { interaction_token: SECRETS[1], name: 'ping' }, token: SECRETS[2] },
    });
    assert.equal(reply.statusCode, 500);
    await app.close();

    const text = logs.raw.join('\n');
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `log output contains ${secret}`);
    assert.ok(text.includes(REDACTED));

    const requestLines = logs.lines.filter(
      (line) => line.reqId === 'log-test-1' && line.msg === 'request completed',
    );
    assert.equal(requestLines.length, 1);
    assert.equal(requestLines[0]?.route, '/test/careless');
    assert.equal(requestLines[0]?.status, 500);
    assert.equal(typeof requestLines[0]?.durationMs, 'number');
    const failure = logs.lines.find((line) => line.msg === 'request failed');
    assert.ok(failure, 'a 5xx is logged with its error');
    assert.match(JSON.stringify(failure), /failed/);
  });
});

describe('the log destination', () => {
  /** Runs the flooding process; its standard output is read only after `readAfterMs` (never: undefined). */
  async function flood(lines: number, waitMs: number, readAfterMs?: number) {
    // Standard output is a named pipe (as a container runtime or a shell gives it).
    const fifo = join(mkdtempSync(join(tmpdir(), 'pds-log-')), 'stdout');
    execFileSync('mkfifo', [fifo]);
    const reading = new Socket({
      fd: openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK),
      readable: true,
    });
    reading.pause();
    const writing = openSync(fifo, constants.O_WRONLY);
    const child = spawn(
      process.execPath,
      [...nodeArgs('test/helpers/log-flood-process.ts'), `${lines}`, `${waitMs}`],
      {
        stdio: ['ignore', writing, 'pipe'],
      },
    );
    closeSync(writing);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    const stdout: Buffer[] = [];
    if (readAfterMs !== undefined)
      setTimeout(() => reading.on('data', (chunk: Buffer) => stdout.push(chunk)).resume(), readAfterMs);
    // The process ends, or (its reader stalled for good) says its destination closed: a write still
    // blocked in the full pipe then holds its exit, and the test ends it.
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const code = await new Promise<number | null | 'closed'>((resolve) => {
      const hung = setTimeout(() => resolve(null), 30_000);
      const settle = (outcome: number | null | 'closed') => {
        clearTimeout(hung);
        resolve(outcome);
      };
      void exited.then(settle);
      if (readAfterMs === undefined)
        child.stderr?.on('data', () => {
          if (stderr.includes('closed')) settle('closed');
        });
    });
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    // What the pipe still holds once the writer is gone.
    if (readAfterMs !== undefined && !reading.readableEnded) await once(reading, 'end');
    reading.destroy();
    const rssGrowthMiB = JSON.parse(stderr.split('\n')[0] ?? '{}').rssGrowthMiB as number;
    return { code, stderr, rssGrowthMiB, stdout: Buffer.concat(stdout).toString('utf8') };
  }

  it('holds a bounded amount for a reader that stopped, and gives up on it when closing', async () => {
    const run = await flood(20_000, 0);
    assert.equal(
      run.code,
      'closed',
      'closing ends within its deadline (a synchronous flush would block for good)',
    );
    // 160 MiB of lines written into a pipe nobody reads: at most LOG_MAX_HELD_BYTES of them are held.
    assert.ok(run.rssGrowthMiB < 64, `memory grew ${run.rssGrowthMiB.toFixed(0)} MiB`);
  });

  it('counts every line it dropped, in a line of its own once the reader is back', async () => {
    const lines = 4000;
    const run = await flood(lines, 3000, 1000);
    assert.equal(run.code, 0);
    const written = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { line?: number; dropped?: number });
    const dropped = written.reduce((sum, line) => sum + (line.dropped ?? 0), 0);
    const kept = written.filter((line) => line.line !== undefined).length;
    assert.ok(dropped > 0, 'a 32 MiB burst into a stalled pipe drops lines');
    assert.equal(kept + dropped, lines, 'every line is written or counted as dropped');
  });
});
