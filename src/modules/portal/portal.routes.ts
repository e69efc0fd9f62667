import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import { DEVELOPER_GRANTS, GRANT_OPENS } from '../../platform/auth/grants.js';
import { AppError, ErrorKinds } from '../../platform/errors.js';
import { fixedBody } from '../../platform/http/fixed-body.js';

/** The portal's files, and what each is served as. */
const FILES = {
  '/portal/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/portal/portal.js': { file: 'portal.js', type: 'text/javascript; charset=utf-8' },
  '/portal/portal.css': { file: 'portal.css', type: 'text/css; charset=utf-8' },
} as const;

/**
 * Only the portal's own files, and Discord's avatars; no inline script or style, no framing, no form
 * posting elsewhere, no referrer leaving the site.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // The pages change with a deployment: the browser asks again each time (a 304 when unchanged).
  'cache-control': 'no-cache',
};

/** The folder of the portal's files (`portal/` at the package's root), wherever this file was built to. */
function portalDirectory(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(directory, 'portal');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const parent = dirname(directory);
    if (parent === directory) throw new Error('the developer portal’s files (portal/index.html) are missing');
    directory = parent;
  }
}

/**
 * The developer portal at `/portal/`: a plain page, its script and its style, served from the package
 * (read once, compressed once, 304 when the browser has them). It talks to the service's own routes with
 * the session cookie.
 */
export const portalRoutes: FastifyPluginAsync = async (app) => {
  const directory = portalDirectory();
  app.get('/portal', { schema: { hide: true } }, async (_request, reply) =>
    reply.code(301).header('location', '/portal/').send(),
  );
  // What the application form offers: the grants a developer may ask for, and what each opens.
  const grants = fixedBody('application/json; charset=utf-8', () =>
    JSON.stringify(DEVELOPER_GRANTS.map((grant) => ({ grant, opens: GRANT_OPENS[grant] }))),
  );
  app.get('/portal/grants.json', { compress: false, schema: { hide: true } }, async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    return grants.send(request, reply);
  });
  for (const [url, { file, type }] of Object.entries(FILES)) {
    const body = fixedBody(type, () => readFileSync(join(directory, file), 'utf8'));
    app.get(url, { compress: false, schema: { hide: true } }, async (request, reply) => {
      reply.headers(SECURITY_HEADERS);
      return body.send(request, reply);
    });
  }
};

/** The pages a browser opens to reach the portal or sign in: with sign-in off, each says why it is not there. */
const PORTAL_PAGES = ['/portal', '/portal/', '/portal/*', '/auth/discord/login', '/auth/discord/callback'];

/**
 * Sign-in off: the portal's pages are 404s that say why (a newcomer sent to /portal/ by the docs learns that
 * this deployment has no portal, and whom to ask).
 */
export const portalOff: FastifyPluginAsync = async (app) => {
  for (const url of PORTAL_PAGES) {
    app.get(url, { schema: { hide: true } }, async () => {
      throw AppError.of(ErrorKinds.ROUTE_NOT_FOUND, {
        reason: 'The developer portal is off on this deployment; ask its operator for access.',
        developerReason:
          'the developer portal is off: Discord sign-in is not configured (DISCORD_CLIENT_ID, DISCORD_CLIENT_SECRET, DISCORD_REDIRECT_URI); ask the operator for an identity token (see /docs#getting-a-token)',
      });
    });
  }
};
