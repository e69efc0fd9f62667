import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's chromium (never a browser downloaded by a package), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why a browser suite is skipped: only outside CI, where chromium may be missing. */
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
  ? false
  : process.env.CI === 'true'
    ? false // CI installs chromium (.ci/run); missing there, the suite fails instead of skipping.
    : `${CHROMIUM} is missing (apt-get install -y chromium, or set CHROMIUM_PATH)`;

/** A port free on 127.0.0.1 now, for an app the browser must reach by a fixed origin. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Headless chromium as the browser suites drive it. */
export const launchChromium = (): Promise<Browser> =>
  puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
