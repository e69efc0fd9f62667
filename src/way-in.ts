import type { Config } from './config.js';

/**
 * How a developer or an operator gets a token, as the service says it wherever a newcomer looks: every
 * 401, the explorer's Authorize box, and the docs page; worded for a deployment with the developer portal
 * (Discord sign-in configured) or without it. Written here, by the composition root, because it names
 * routes of several modules (the portal, applications' keys, tokens).
 */
export interface WayIn {
  /** One sentence for every 401: where a token comes from. */
  readonly token: string;
  /** One sentence for the 401s of the routes that manage keys (the portal's session or an identity token). */
  readonly identity: string;
  /** The explorer's Authorize box (the bearer scheme's description). */
  readonly bearerDescription: string;
  /** The docs page's "Getting a token" section (HTML). */
  readonly docsHtml: string;
}

/** The texts for this configuration. */
export const wayInFor = (config: Config): WayIn =>
  wayInOf({
    portal: config.portal.discord !== undefined,
    refreshGraceSeconds: config.auth.refreshGraceSeconds,
  });

const OPERATOR_CLI =
  '`node dist/cli.js token issue --owner <discord id> [--grant <grant> ...]` (no `--grant`: an identity token)';

export function wayInOf({
  portal,
  refreshGraceSeconds,
}: {
  /** Whether Discord sign-in, and so the portal, is on. */
  readonly portal: boolean;
  readonly refreshGraceSeconds: number;
}): WayIn {
  const identityFrom = portal
    ? 'the developer portal (/portal/: sign in with Discord; it also gives identity tokens)'
    : "an identity token from the service's operator (the developer portal is off on this deployment)";
  const token =
    `Where a token comes from: apply for access with ${identityFrom}; once approved, collect the application's ` +
    'key and exchange it for a token at POST /auth/token, as often as needed. Operators issue tokens with the ' +
    'command line. See /docs#getting-a-token.';
  const identity = portal
    ? 'Keys are managed signed in to the developer portal (/portal/), or with an identity token (no grants) of the owner.'
    : "Keys are managed with an identity token (no grants) of the owner, from the service's operator.";
  const bearerDescription =
    'An access token of the service. ' +
    (portal
      ? 'Developers: sign in to the developer portal (`/portal/`) with Discord, apply for access, and once approved ' +
        "collect your application's key there; to apply from a script, the portal gives an identity token " +
        '(`POST /auth/session/token`). '
      : "Developers: ask the service's operator for an identity token (the developer portal is off here), apply " +
        'with it (`POST /admin/developer/applications`), and once approved collect the key ' +
        '(`POST /admin/developer/applications/{id}/key`). ') +
    'Exchange the key for a token at `POST /auth/token` (as often as needed), and paste the token here. ' +
    `Operators issue tokens with the command line: ${OPERATOR_CLI}. Refresh a token at \`POST /auth/refresh\`. ` +
    'See /docs#getting-a-token.';
  const grace =
    refreshGraceSeconds > 0
      ? ` two shards refreshing the same token within ${refreshGraceSeconds} seconds both get the same new token.`
      : ' each token is refreshed once: presenting it again revokes its chain.';
  const developers = portal
    ? `<p><strong>Developers</strong>: open the <a href="/portal/">developer portal</a> and sign in with Discord (your Discord ID
is your owner ID). Apply for the grants your bot needs; a reviewer approves or rejects the application. Once it is approved,
collect its key in the portal (shown once: keep it with your bot's secrets; rotate it if it is lost or leaked).
To apply from a script instead, the portal gives an identity token (no grants) that may only apply, follow your
applications and manage their keys; signing out revokes it.`
    : `<p><strong>Developers</strong>: the developer portal is off on this deployment. Ask its operator for an identity token
(no grants: it may only apply, follow your applications and manage their keys), apply with it
(<code>POST /admin/developer/applications</code>), and once a reviewer approves the application collect its key
(<code>POST /admin/developer/applications/{id}/key</code>, shown once: keep it with your bot's secrets; rotate it if it is
lost or leaked).`;
  const docsHtml = `<h2 id="getting-a-token">Getting a token</h2>
${developers} Your bot exchanges the key for a token at <code>POST /auth/token</code> <code>{"key": "pds_..."}</code> whenever it
starts or its token expires, and sends the token as <code>Authorization: Bearer &lt;token&gt;</code>. A token can also be
refreshed at <code>POST /auth/refresh</code>;${grace}</p>
<p><strong>Operators</strong>: <code>node dist/cli.js token issue --owner &lt;discord id&gt; --grant &lt;grant&gt; ...</code>
prints a token (with no <code>--grant</code>, an identity token to apply with; run it with the service's environment:
its <code>DATABASE_URL</code>, <code>DATA_DIR</code> and <code>JWT_SECRET</code>);
<code>node dist/cli.js applications approve &lt;id&gt;</code> approves an application without printing any secret.
Sign-in with Discord is on when <code>DISCORD_CLIENT_ID</code>, <code>DISCORD_CLIENT_SECRET</code> and
<code>DISCORD_REDIRECT_URI</code> are set (otherwise the portal and the sign-in routes answer 404); reviewers in the portal
are the Discord IDs of <code>PORTAL_REVIEWERS</code>.</p>`;
  return { token, identity, bearerDescription, docsHtml };
}
