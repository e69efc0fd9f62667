import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { it } from 'node:test';
import { sql } from 'kysely';
import { Agent, request as undiciRequest } from 'undici';
import { describeOrSkip } from '../helpers/backends.js';
import { allDialects, skipOn } from '../helpers/environment.js';
import { eventually } from '../helpers/poll.js';
import { serviceOnFreshDatabase } from '../helpers/service-process.js';

/*
 * SIGTERM while the service is under load (shutdown.test.ts covers one slow request on an otherwise idle
 * service): kept-alive connections writing interaction logs, a new connection per request reading, and slow
 * requests in flight. Every answer that starts is whole (a 200, or for a request read once shutdown began a
 * 503 SHUTTING_DOWN ErrorResponse); the in-flight requests finish; a log is stored exactly when it was
 * answered 200 (none processed and its answer lost); the process exits 0.
 */

const KEPT_ALIVE_WRITERS = 12;
const NEW_CONNECTION_READERS = 6;
const SLOW_REQUESTS = 6;
const SLOW_MS = 1500;
/** Logs acknowledged before the slow requests start: the load is under way. */
const WARM_UP_LOGS = 100;
/** From SIGTERM to exit at most: the in-flight requests' time, plus a wide margin (SHUTDOWN_TIMEOUT_MS is 10 s). */
const EXIT_BOUND_MS = 15_000;
/**
 * A request sent this long before SIGTERM has been read by the service when shutdown begins (a wide
 * margin over its time to read one under this load): it must be answered, and not refused as closing. One
 * sent later may still be on its way when the service closes its idle connections, and go unanswered.
 */
const READ_MARGIN_MS = 1000;

/**
 * What became of one request: no answer at all (the connection was refused or closed before any answer
 * began), a whole answer, or an answer cut after it began (its head arrived, its body did not).
 */
type Outcome =
  | { readonly kind: 'unanswered'; readonly error: string }
  | {
      readonly kind: 'whole';
      readonly status: number;
      readonly headers: Record<string, string | string[] | undefined>;
      readonly body: string;
    }
  | { readonly kind: 'cut'; readonly status: number; readonly error: string };

interface Sent {
  readonly what: string;
  readonly outcome: Outcome;
  /** When the request was sent (epoch ms). */
  readonly sentAt: number;
}

/** A GET on a connection of its own (closed after the answer), as a client without keep-alive sends it. */
function getOnNewConnection(url: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = httpRequest(url, { agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('error', (error) =>
        resolve({ kind: 'cut', status: response.statusCode ?? 0, error: error.message }),
      );
      response.on('end', () => {
        if (!response.complete)
          resolve({ kind: 'cut', status: response.statusCode ?? 0, error: 'incomplete' });
        else resolve({ kind: 'whole', status: response.statusCode ?? 0, headers: response.headers, body });
      });
    });
    request.on('error', (error) => resolve({ kind: 'unanswered', error: error.message }));
    request.end();
  });
}

/** A POST on a kept-alive connection of `agent`. */
async function postKeptAlive(agent: Agent, url: string, token: string, body: string): Promise<Outcome> {
  let head: {
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
    text(): Promise<string>;
  };
  try {
    const response = await undiciRequest(url, {
      dispatcher: agent,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    head = { statusCode: response.statusCode, headers: response.headers, text: () => response.body.text() };
  } catch (error) {
    return { kind: 'unanswered', error: (error as Error).message };
  }
  try {
    return { kind: 'whole', status: head.statusCode, headers: head.headers, body: await head.text() };
  } catch (error) {
    return { kind: 'cut', status: head.statusCode, error: (error as Error).message };
  }
}

/** An interaction log whose user ID is its number, so the database says which logs it holds. */
const logBody = (user: number) =>
  JSON.stringify({
    interaction: {
      interaction_name: 'stats',
      interaction_token: `shutdown-${user}-${Math.random()}`,
      interaction_type: 'APPLICATION_COMMAND',
      user_id: String(user),
    },
    user: { user_id: String(user), username: `user${user}` },
  });

/** Whether a request may have met the closing service (sent after, or just before, SIGTERM). */
const nearShutdown = (sent: Sent, sigtermAt: number) => sent.sentAt >= sigtermAt - READ_MARGIN_MS;

/** A whole answer is a 200, or for a request read once closing, a 503 SHUTTING_DOWN closing its connection. */
function assertWholeAnswerAllowed(sent: Sent, sigtermAt: number) {
  if (sent.outcome.kind !== 'whole') return;
  const { status, headers, body } = sent.outcome;
  if (status === 200) return;
  const what = `${sent.what}: ${status} ${body}`;
  assert.equal(status, 503, what);
  assert.ok(nearShutdown(sent, sigtermAt), `${what}: refused as closing, sent well before SIGTERM`);
  assert.equal(JSON.parse(body).extra?.[0]?.name, 'SHUTTING_DOWN', what);
  assert.ok(Number(headers['retry-after']) >= 1, `${what}: with Retry-After`);
  assert.equal(headers.connection, 'close', what);
}

for (const dialect of allDialects) {
  describeOrSkip(`SIGTERM under load on ${dialect}`, { skip: skipOn(dialect) }, () => {
    it('finishes what is in flight, answers every request it reads whole, stores exactly what it acknowledged, exits 0', async (t) => {
      const { service, exited, db, tokens } = await serviceOnFreshDatabase(
        t,
        dialect,
        'test/helpers/slow-server.ts',
        { SLOW_MS: String(SLOW_MS), DATA_DIR: '/nonexistent-unused' },
      );
      const token = (await tokens.issue(42n, ['messenger:log'])).token;
      const agent = new Agent({ connections: KEPT_ALIVE_WRITERS });
      t.after(() => agent.close());

      const sent: Sent[] = [];
      const record = async (what: string, send: () => Promise<Outcome>) => {
        const sentAt = Date.now();
        const outcome = await send();
        sent.push({ what, outcome, sentAt });
        return outcome;
      };
      // Each client goes on until the service stops answering it: the service having stopped accepting, or
      // (checked below) a request it dropped.
      let nextUser = 1;
      const writer = async () => {
        for (;;) {
          const user = nextUser++;
          const url = `${service.url}/messenger/logging/interaction`;
          const outcome = await record(`log ${user}`, () => postKeptAlive(agent, url, token, logBody(user)));
          if (outcome.kind !== 'whole') return;
        }
      };
      const reader = async () => {
        for (;;) {
          const outcome = await record('health', () => getOnNewConnection(`${service.url}/health`));
          if (outcome.kind !== 'whole') return;
        }
      };
      const load = Promise.all([
        ...Array.from({ length: KEPT_ALIVE_WRITERS }, writer),
        ...Array.from({ length: NEW_CONNECTION_READERS }, reader),
      ]);
      const acknowledged = () =>
        sent.filter(
          ({ what, outcome }) => what.startsWith('log') && outcome.kind === 'whole' && outcome.status === 200,
        );
      await eventually('the load under way', () => acknowledged().length >= WARM_UP_LOGS, {
        withinMs: 30_000,
      });
      const slow = Array.from({ length: SLOW_REQUESTS }, () =>
        record('slow', () => getOnNewConnection(`${service.url}/test/slow`)),
      );
      await eventually('the slow requests in flight', () => {
        return (service.output.join('').match(/slow request started/g) ?? []).length >= SLOW_REQUESTS;
      });

      const sigtermAt = Date.now();
      service.child.kill('SIGTERM');
      // A shutdown that hangs is ended, and fails below as killed.
      const hung = setTimeout(() => service.child.kill('SIGKILL'), EXIT_BOUND_MS);
      const [code, signal] = await exited;
      clearTimeout(hung);
      const exitMs = Date.now() - sigtermAt;
      await Promise.all([load, ...slow]);

      assert.deepEqual([code, signal], [0, null], service.output.join('').slice(-2000));
      for (const outcome of await Promise.all(slow)) {
        assert.equal(outcome.kind, 'whole', `a request in flight at SIGTERM: ${JSON.stringify(outcome)}`);
        if (outcome.kind !== 'whole') continue;
        assert.equal(outcome.status, 200);
        assert.deepEqual(JSON.parse(outcome.body), { finished: true });
        assert.equal(outcome.headers.connection, 'close', 'finished while closing: the connection ends');
      }
      const cut = sent.filter(({ outcome }) => outcome.kind === 'cut');
      assert.deepEqual(cut, [], 'no answer is cut once it began');
      const dropped = sent.filter(
        (entry) => entry.outcome.kind === 'unanswered' && !nearShutdown(entry, sigtermAt),
      );
      assert.deepEqual(dropped, [], 'every request read before shutdown began is answered');
      for (const entry of sent) assertWholeAnswerAllowed(entry, sigtermAt);

      const { rows } = await sql<{ user_id: string }>`select user_id from interaction_logs`.execute(db);
      const stored = new Set(rows.map((row) => `log ${row.user_id}`));
      const acknowledgedLogs = new Set(acknowledged().map(({ what }) => what));
      const lost = [...acknowledgedLogs].filter((log) => !stored.has(log));
      assert.deepEqual(lost, [], 'every log answered 200 is stored');
      const unacknowledged = [...stored].filter((log) => !acknowledgedLogs.has(log));
      assert.deepEqual(unacknowledged, [], 'no log was stored whose answer was lost');

      const count = (kind: Outcome['kind'], status?: number) =>
        sent.filter(
          ({ outcome }) =>
            outcome.kind === kind &&
            (status === undefined || ('status' in outcome && outcome.status === status)),
        ).length;
      t.diagnostic(
        `${sent.length} requests: ${count('whole', 200)} answered 200, ${count('whole', 503)} 503 while closing, ` +
          `${count('unanswered')} unanswered (refused or closed), ${count('cut')} cut; exit after ${exitMs} ms`,
      );
    });
  });
}
