/**
 * How a developer or an operator gets a token, as the service says it wherever a newcomer looks: the 401s
 * about a missing or ended token, the explorer's Authorize box, and the docs page. Written here, by the
 * composition root, because it names routes of several modules (the portal, applications' keys, tokens).
 */

/** One sentence, for the `developer_reason` of a 401. */
export const WAY_IN =
  'A developer gets one by signing in to the developer portal (/portal/), applying for access and, once ' +
  "approved, exchanging the application's key at POST /auth/token; or from an operator (see /docs#getting-a-token).";

/** The explorer's Authorize box (the bearer scheme's description). */
export const BEARER_SCHEME_DESCRIPTION =
  'An access token of the service. Developers: sign in to the developer portal (`/portal/`) with Discord, ' +
  "apply for access, and once approved collect your application's key there; exchange the key for a token " +
  'at `POST /auth/token` (as often as needed), and paste the token here. To apply from a script, the ' +
  'portal gives an identity token (`POST /auth/session/token`). Operators issue tokens with the command ' +
  'line: `node dist/cli.js token issue --owner <discord id> [--grant <grant> ...]`. Refresh a token at ' +
  '`POST /auth/refresh`. See /docs#getting-a-token.';

/** The docs page's "Getting a token" section (HTML), with the refresh grace as configured. */
export function gettingATokenHtml(refreshGraceSeconds: number): string {
  const grace =
    refreshGraceSeconds > 0
      ? ` two shards refreshing the same token within ${refreshGraceSeconds} seconds both get the same new token.`
      : ' each token is refreshed once: presenting it again revokes its chain.';
  return `<h2 id="getting-a-token">Getting a token</h2>
<p><strong>Developers</strong>: open the <a href="/portal/">developer portal</a> and sign in with Discord (your Discord ID is
your owner ID). Apply for the grants your bot needs; a reviewer approves or rejects the application. Once it is approved,
collect its key in the portal (shown once: keep it with your bot's secrets; rotate it if it is lost or leaked). Your bot
exchanges the key for a token at <code>POST /auth/token</code> <code>{"key": "pds_..."}</code> whenever it starts or its token
expires, and sends the token as <code>Authorization: Bearer &lt;token&gt;</code>. A token can also be refreshed at
<code>POST /auth/refresh</code>;${grace}
To apply from a script instead, the portal gives an identity token (no grants) that may only apply and follow your
applications.</p>
<p><strong>Operators</strong>: <code>node dist/cli.js token issue --owner &lt;discord id&gt; --grant &lt;grant&gt; ...</code>
prints a token (with no <code>--grant</code>, an identity token to apply with);
<code>node dist/cli.js applications approve &lt;id&gt;</code> approves an application without printing any secret.
Sign-in with Discord is on when <code>DISCORD_CLIENT_ID</code>, <code>DISCORD_CLIENT_SECRET</code> and
<code>DISCORD_REDIRECT_URI</code> are set (otherwise the portal and the sign-in routes answer 404); reviewers in the portal
are the Discord IDs of <code>PORTAL_REVIEWERS</code>.</p>`;
}
