/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { describeOrSkip } from '../helpers/backends.js';
import { buildTestApp, suiteScope } from '../helpers/build-test-app.js';
import { freePort, launchChromium, skipWithoutChromium } from '../helpers/chromium.js';
import { type DiscordTestUser, startFakeDiscord } from '../helpers/fake-discord.js';

/**
 * The developer portal in a real browser (Debian's chromium, driven by puppeteer-core) against the service
 * and a fake Discord: sign in, apply, approve as a reviewer, collect the key, use it, rotate it. Every page
 * is screenshotted into test-results/portal/; a console error or an uncaught error fails the test.
 */

const SCREENSHOTS = join(process.cwd(), 'test-results', 'portal');
const DEVELOPER: DiscordTestUser = { id: '444444444444444444', username: 'dana', global_name: 'Dana' };
const REVIEWER: DiscordTestUser = { id: '555555555555555555', username: 'rita', global_name: 'Rita' };

describeOrSkip('the developer portal in a browser', { skip: skipWithoutChromium }, () => {
  const scope = suiteScope();
  let browser: Browser;
  let origin: string;
  let discord: Awaited<ReturnType<typeof startFakeDiscord>>;
  const problems: string[] = [];

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    discord = await startFakeDiscord(scope);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    const { app } = await buildTestApp(scope, {
      env: { ...discord.env(origin), PORTAL_REVIEWERS: REVIEWER.id },
    });
    await app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  /** A page in its own browser context (its own cookies), watched for console errors. */
  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.createBrowserContext();
    await context.overridePermissions(origin, [
      'clipboard-read',
      'clipboard-write',
      'clipboard-sanitized-write',
    ]);
    const page = await context.newPage();
    await page.setViewport({ width: 1200, height: 900 });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${String(error)}`));
    page.on('dialog', (dialog) => void dialog.accept());
    return { context, page };
  }
  const ready = (page: Page) => page.waitForSelector('body[data-ready="true"]');
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  async function signIn(page: Page, user: DiscordTestUser) {
    discord.signInAs(user);
    await page.goto(`${origin}/portal/`);
    await ready(page);
    await Promise.all([page.waitForNavigation(), page.click('#sign-in')]);
    await ready(page);
    await page.waitForSelector('#signed-in:not([hidden])');
  }
  const text = (page: Page, selector: string) => page.$eval(selector, (node) => node.textContent ?? '');
  const exchange = (key: string) =>
    fetch(`${origin}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key }),
    });

  it('signs in, applies, is approved by a reviewer, collects the key, uses it and rotates it', async () => {
    const { page } = await newPage();
    await page.goto(`${origin}/portal/`);
    await ready(page);
    assert.equal(
      await page.$eval('#signed-out', (node) => (node as HTMLElement).hidden),
      false,
      'signed out first',
    );
    await shot(page, '1-signed-out');

    await signIn(page, DEVELOPER);
    assert.match(await text(page, '#who-name'), /Dana/);
    assert.match(await text(page, '#apps-empty'), /no applications/);
    await shot(page, '2-signed-in');

    // Apply: the form explains each grant.
    const grants = await page.$$eval('#grants .grant', (rows) => rows.map((row) => row.textContent ?? ''));
    assert.ok(
      grants.some((row) => row.includes('player:read') && row.includes('Hypixel data')),
      grants.join('|'),
    );
    assert.ok(!grants.some((row) => row.includes('ping:write')), 'no operator grant is offered');
    await page.type('#apply-name', 'Dana stats bot');
    await page.type('#apply-description', 'Shows guild members their Bed Wars stats.');
    await page.click('#grant-player-read');
    await page.click('#apply button[type="submit"]');
    await page.waitForSelector('#apps .app');
    assert.match(await text(page, '#apps .app'), /Dana stats bot.*pending/s);
    await shot(page, '3-applied');

    // A reviewer approves, in another browser.
    const reviewer = await newPage();
    await signIn(reviewer.page, REVIEWER);
    await reviewer.page.waitForSelector('#review:not([hidden]) #pending .app');
    assert.match(await text(reviewer.page, '#pending'), /Dana stats bot/);
    await reviewer.page.type('#pending textarea', 'Looks fine.');
    await shot(reviewer.page, '4-review');
    const [approve] = await reviewer.page.$$('#pending .app button');
    await approve?.click();
    await reviewer.page.waitForSelector('#review-empty:not([hidden])');
    await shot(reviewer.page, '5-reviewed');

    // The developer collects the key, once, with a copy button.
    await page.reload();
    await ready(page);
    await page.waitForSelector('#apps .state-approved');
    const collect = await page.waitForSelector('xpath///button[text()="Collect key"]');
    await collect?.click();
    await page.waitForSelector('#key-panel:not([hidden])');
    const key = await page.$eval('#key-value', (input) => (input as HTMLInputElement).value);
    assert.match(key, /^pds_[A-Za-z0-9_-]{43}$/);
    await page.click('#key-copy');
    assert.equal(
      await page.evaluate(() => navigator.clipboard.readText()),
      key,
      'the copy button copies the key',
    );
    await shot(page, '6-key');

    // The key works from outside the browser.
    const exchanged = await exchange(key);
    assert.equal(exchanged.status, 200);
    const { token } = (await exchanged.json()) as { token: string };
    const me = await fetch(`${origin}/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(((await me.json()) as { grants: string[] }).grants, ['player:read']);

    // Rotate: the old key ends, the new one works.
    await page.click('#key-done');
    const rotate = await page.waitForSelector('xpath///button[text()="Rotate key"]');
    await rotate?.click();
    await page.waitForFunction(
      (old) => {
        const input = document.querySelector('#key-value') as HTMLInputElement | null;
        return input !== null && input.value !== '' && input.value !== old;
      },
      {},
      key,
    );
    const rotated = await page.$eval('#key-value', (input) => (input as HTMLInputElement).value);
    assert.notEqual(rotated, key);
    assert.equal((await exchange(key)).status, 401, 'the old key has ended');
    assert.equal((await exchange(rotated)).status, 200, 'the new key works');
    await shot(page, '7-rotated');

    // Usage today reflects the requests made.
    await page.reload();
    await ready(page);
    assert.match(await text(page, '#usage-requests'), /^[1-9][0-9]*$/);
    await shot(page, '8-usage');
    assert.deepEqual(problems, [], 'no console errors');
  });

  it('is readable on a phone and usable with labels and the keyboard', async () => {
    const { page } = await newPage();
    await page.setViewport({ width: 375, height: 740, isMobile: true, hasTouch: true });
    await signIn(page, DEVELOPER);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a phone`);
    await shot(page, '9-phone');
    const unlabelled = await page.$$eval('input, textarea, select', (fields) =>
      fields
        .filter((field) => (field as HTMLInputElement).type !== 'hidden')
        .filter(
          (field) => (field as HTMLInputElement).labels?.length === 0 && !field.getAttribute('aria-label'),
        )
        .map((field) => field.id || field.outerHTML),
    );
    assert.deepEqual(unlabelled, [], 'every field has a label');
    // The keyboard reaches the form: the first Tab lands on the skip link, which moves focus to the content.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'skip');
    await page.keyboard.press('Enter');
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'main',
      'the skip link moves focus to the content',
    );
    await page.focus('#apply-name');
    await page.keyboard.type('Keyboard bot');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'apply-description');
    assert.deepEqual(problems, [], 'no console errors');
  });
});
