/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { GRANTS } from '../../src/platform/auth/grants.js';
import { describeOrSkip } from '../helpers/backends.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';
import { freePort, launchChromium, skipWithoutChromium } from '../helpers/chromium.js';
import { issueToken } from '../helpers/tokens.js';

/**
 * The documentation in a real browser (Debian's chromium, driven by puppeteer-core): /docs reads as a bot
 * developer needs it (getting started, each endpoint with its grant, the errors last), and the explorer at
 * /docs/ui/ shows the operations first and sends the document's examples as they are ("Try it out"). A
 * console error, an uncaught error, a failed request or an answer of 400 or more fails the test; every page
 * is screenshotted into test-results/docs/.
 */

const SCREENSHOTS = join(process.cwd(), 'test-results', 'docs');

describeOrSkip('the documentation in a browser', { skip: skipWithoutChromium }, () => {
  const scope = suiteScope();
  let browser: Browser;
  let origin: string;
  let token: string;

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    const { app, config } = await buildTestApp(scope);
    token = await issueToken(app, config, { owner: 234567890123456789n, grants: GRANTS });
    await app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  /** A page in its own context, each problem it meets recorded. */
  async function newPage(): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    const problems: string[] = [];
    await page.setViewport({ width: 1200, height: 900 });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${String(error)}`));
    page.on('requestfailed', (request) =>
      problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`),
    );
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
    return { page, problems };
  }
  async function shot(page: Page, name: string) {
    const path = join(SCREENSHOTS, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    assert.ok(statSync(path).size > 1000, `${path} is a picture`);
  }

  it('/docs: getting started, each endpoint with its grant and example, the errors after the endpoints', async () => {
    const { page, problems } = await newPage();
    const reply = await page.goto(`${origin}/docs`, { waitUntil: 'networkidle0' });
    assert.equal(reply?.status(), 200);
    const text = (selector: string) => page.$eval(selector, (node) => node.textContent ?? '');

    // Getting started: a token, then the first call in curl and in TypeScript.
    assert.match(await text('#getting-started'), /Getting started/);
    assert.ok(await page.$('#getting-a-token'), 'the way in of this deployment');
    const firstCall = await page.$$eval('#first-call ~ pre', (blocks) =>
      blocks.slice(0, 2).map((block) => block.textContent ?? ''),
    );
    assert.match(
      firstCall[0] ?? '',
      /curl -s -X POST "\$PDS_URL\/auth\/token"[\s\S]*Authorization: Bearer \$PDS_TOKEN/,
    );
    assert.match(
      firstCall[1] ?? '',
      /await fetch\(`\$\{base\}\$\{path\}`[\s\S]*Authorization: `Bearer \$\{token\}`/,
    );

    // An operation's grant and example request, made from the document.
    const logInteraction = await text('#op-logInteraction');
    assert.match(logInteraction, /POST \/messenger\/logging\/interaction/);
    assert.match(logInteraction, /grant messenger:log/);
    assert.match(
      logInteraction,
      /curl -X POST "\$PDS_URL\/messenger\/logging\/interaction"[\s\S]*-d '\{"interaction"/,
    );
    assert.equal(
      await page.$eval('#op-getPlayer .grant', (node) => node.textContent),
      'player:read',
      "getPlayer's grant",
    );

    // The error catalogue after the last operation, each error with how to fix it.
    const errorsAfterOperations = await page.evaluate(() => {
      const operations = document.querySelectorAll('section.op');
      const last = operations[operations.length - 1];
      const errors = document.querySelector('#errors');
      return (
        operations.length > 20 &&
        last !== undefined &&
        errors !== null &&
        Boolean(last.compareDocumentPosition(errors) & Node.DOCUMENT_POSITION_FOLLOWING)
      );
    });
    assert.ok(errorsAfterOperations, 'the errors come after the operations');
    const fixes = await page.$$eval('#error-catalogue tbody tr td.fix', (cells) =>
      cells.map((cell) => cell.textContent ?? ''),
    );
    assert.ok(fixes.length > 40 && fixes.every((fix) => fix.length > 10), 'every error says how to fix it');
    assert.match(await text('#error-GRANT_MISSING'), /apply for an application with that grant/);
    await shot(page, '1-docs');
    assert.deepEqual(problems, [], 'no console errors, failed requests or error answers (a favicon too)');
  });

  it('/docs/ui/: the operations before any error table, and "Try it out" sends the examples that work', async () => {
    const { page, problems } = await newPage();
    await page.goto(`${origin}/docs/ui/`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.opblock');
    const layout = await page.evaluate(() => {
      const info = document.querySelector('.information-container');
      const first = document.querySelector('.opblock');
      const models = document.querySelector('.models');
      return {
        tablesInInfo: info?.querySelectorAll('table').length ?? -1,
        linksErrors: Boolean(info?.querySelector('a[href="/docs#errors"]')),
        modelsAfterOperations:
          first !== null &&
          models !== null &&
          Boolean(first.compareDocumentPosition(models) & Node.DOCUMENT_POSITION_FOLLOWING),
        developerOperations: document.querySelectorAll('[id^="operations-Developer-createApplication"]')
          .length,
      };
    });
    assert.deepEqual(layout, {
      tablesInInfo: 0,
      linksErrors: true,
      modelsAfterOperations: true,
      developerOperations: 1,
    });
    await shot(page, '2-explorer');

    // Authorize with a token, as a developer pastes it.
    await page.click('button.authorize');
    await page.waitForSelector('.modal-ux input[type="text"]');
    await page.type('.modal-ux input[type="text"]', token);
    await page.click('.modal-ux button.authorize');
    await page.click('.modal-ux button.btn-done');

    for (const [tag, operationId, status] of [
      ['Messenger', 'logInteraction', /^2\d\d$/],
      ['Developer', 'createApplication', /^2\d\d$/],
    ] as const) {
      const block = `#operations-${tag}-${operationId}`;
      await page.click(`${block} .opblock-summary-control`);
      await page.waitForSelector(`${block} .try-out__btn`);
      await page.click(`${block} .try-out__btn`);
      await page.waitForSelector(`${block} button.execute`);
      await page.click(`${block} button.execute`);
      await page.waitForSelector(`${block} .live-responses-table tbody .response-col_status`, {
        timeout: 15_000,
      });
      const answered = await page.$eval(
        `${block} .live-responses-table tbody .response-col_status`,
        (node) => node.textContent?.trim() ?? '',
      );
      const body = await page.$eval(
        `${block} .live-responses-table tbody .response-col_description`,
        (node) => node.textContent?.slice(0, 500),
      );
      assert.match(answered, status, `${operationId}: ${answered} ${body}`);
      await shot(page, `3-try-${operationId}`);
    }
    // The answer shows a 64-bit ID as sent: the token's owner, 234567890123456789, is not a float's
    // 234567890123456780 (the explorer prints answers through JSON.parse; explorer-exact-ids.ts keeps digits).
    const created = await page.$eval(
      '#operations-Developer-createApplication .live-responses-table tbody .response-col_description',
      (node) => node.textContent ?? '',
    );
    assert.match(created, /"owner": 234567890123456789\b/, created.slice(0, 500));
    assert.deepEqual(problems, [], 'no console errors, failed requests or error answers');
  });
});
