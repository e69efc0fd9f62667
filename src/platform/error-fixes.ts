import type { ErrorName } from './error-catalogue.js';

/**
 * How to fix each kind of error, for the developer: shown beside it in the docs page's catalogue and the
 * OpenAPI document's. Every kind has one (the type says so).
 */
export const fixes: { readonly [N in ErrorName]: string } = {
  BAD_REQUEST:
    "Read `developer_reason`; send the request as this endpoint's operation in /openapi.json describes it.",
  MALFORMED_JSON:
    'Send the body as JSON text (`JSON.stringify`), not a form or a string with quotes missing.',
  MISSING_FIELD:
    "Add the field `developer_reason` names; the operation's request schema lists the required ones.",
  INVALID_FIELD:
    'Change the field `developer_reason` names to a value its schema allows (its type, pattern or range).',
  UNKNOWN_FIELD:
    'Leave out the field `developer_reason` names: the endpoint takes only the fields of its schema.',
  UNSUPPORTED_MEDIA_TYPE: 'Send `Content-Type: application/json` with a JSON body.',
  BODY_TOO_LARGE: 'Send a smaller body: fewer items per request, split across several requests.',
  ROUTE_NOT_FOUND:
    'Check the method and path against the endpoints above (e.g. `/player/{player}`, not `/players/{player}`).',
  METHOD_NOT_ALLOWED: 'Use one of the methods the `Allow` header lists for this path.',
  RATE_LIMITED:
    'Wait the seconds of `Retry-After` before sending again; space out requests from this address.',
  BODY_TOO_DEEP: 'Flatten the body: nest objects and arrays less deeply.',
  REQUEST_TIMEOUT: "Send the whole request promptly, in one go; check the client's connection.",
  URI_TOO_LONG: 'Shorten the path and query; send long lists in a body (`POST /players`).',
  WORK_BUDGET_EXHAUSTED:
    'Wait `Retry-After` seconds; cache answers, batch reads, and watch `RateLimit` (or `GET /auth/me`).',
  TOO_MANY_IN_FLIGHT:
    'Send fewer requests at once: await answers before sending more (a small queue or pool).',
  EXPECTATION_FAILED: 'Leave out the `Expect` header, or send `Expect: 100-continue` (the only one taken).',
  TOKEN_MISSING: 'Send `Authorization: Bearer <token>`; get a token as /docs#getting-a-token says.',
  TOKEN_INVALID:
    'Send the token exactly as `POST /auth/token` gave it, after `Bearer ` (a token of this service, not a key).',
  TOKEN_EXPIRED:
    'Get a new token: exchange your key at `POST /auth/token` again, or refresh at `POST /auth/refresh`.',
  TOKEN_REVOKED: 'Exchange your application key for a new token at `POST /auth/token`.',
  TOKEN_REUSED:
    'Refresh each token once and keep the new one; exchange your key at `POST /auth/token` to start a new chain.',
  GRANT_MISSING:
    'Use a token with the grant this endpoint names (its scope); apply for an application with that grant.',
  EXPIRES_AT_MISMATCH: 'Send the `expires_at` that came with the token, unchanged, or leave it out.',
  NOT_RESOURCE_OWNER:
    "Use a token of the resource's owner, or one with the grant that opens others' resources.",
  TOKEN_NO_OWNER: 'Use a token issued for an owner: exchange an application key at `POST /auth/token`.',
  KEY_INVALID:
    'Use the current key of an approved application: collect or rotate it in the portal (or `.../key/rotate`).',
  CSRF_TOKEN_INVALID:
    'Send the CSRF token of `GET /auth/session` in `X-CSRF-Token`; in the portal, reload the page.',
  SIGN_IN_STATE_INVALID:
    "Start the sign-in again from `GET /auth/discord/login` (the portal's Sign in button).",
  SIGN_IN_REJECTED: "Start the sign-in again and approve the service in Discord's consent page.",
  RETURN_PATH_INVALID: 'Give a return path under `/portal/`, or none.',
  SESSION_INVALID: 'Sign in to the portal again.',
  IDENTITY_REQUIRED:
    'Manage keys signed in to the portal, or with an identity token of the owner (no grants).',
  APPLICATION_NOT_FOUND: "Check the application's id: list yours with `GET /admin/developer/applications`.",
  APPLICATION_STATE_CONFLICT:
    "Read the application's `state` first (`GET .../{id}`); `developer_reason` names the changes its state allows.",
  TOO_MANY_PENDING_APPLICATIONS:
    "Withdraw a pending application (`POST .../{id}/withdraw`) or wait for a reviewer's decision.",
  OWNER_MISMATCH: "Leave `owner` out (it is the token's owner) or give your own Discord ID.",
  NOT_APPLICATION_OWNER: "Use a token or portal session of the application's owner.",
  OWN_APPLICATION_REVIEW: 'Ask another reviewer to decide on your own application.',
  OPERATOR_ONLY_GRANT:
    'Ask only for developer grants (see /docs#grants); operator grants come from the command line.',
  KEY_ALREADY_COLLECTED: 'Rotate the key (`POST .../{id}/key/rotate`) to get a new one; the old one ends.',
  KEY_NOT_AVAILABLE:
    'Wait for approval (the key comes with it); an ended application needs a new application.',
  MESSENGER_USER_NOT_FOUND:
    'Check the Discord ID; a user is created by `PUT .../profile` or by linking an account.',
  ACCOUNT_LINKED_ELSEWHERE: 'Unlink the account from the other user first, or link another account.',
  TOO_MANY_LINKED_ACCOUNTS: 'Unlink an account (`DELETE .../accounts/{uuid}`) before linking another.',
  ACCOUNT_NOT_LINKED: "Check the UUID against the user's linked accounts (`GET .../profile`).",
  LINK_NOT_VERIFIED: "Have the player set their Discord username in Hypixel's social menu, then try again.",
  USERNAME_UNKNOWN:
    'Send `username` with the link, or log an interaction of the user first (it records their username).',
  PLAYER_NOT_FOUND: "Check the username's spelling, or give the player's UUID.",
  INTERNAL_ERROR: "Retry later; if it persists, report it with the answer's `X-Request-Id`.",
  SHUTTING_DOWN: 'Retry after `Retry-After`: another instance will answer.',
  DEPENDENCY_UNAVAILABLE: 'Retry after `Retry-After`, with backoff.',
  WRITE_QUEUE_FULL: 'Retry shortly with backoff; send fewer writes at once.',
  UPSTREAM_THROTTLED: 'Wait `Retry-After` seconds; prefer cached reads and batch lookups (`POST /players`).',
  UPSTREAM_TIMEOUT: 'Retry later with backoff.',
  UPSTREAM_UNAVAILABLE: 'Retry later with backoff; cached data may still be served.',
  UPSTREAM_BAD_GATEWAY: "Retry later; if it persists, report it with the answer's `X-Request-Id`.",
  DISCORD_UNAVAILABLE: 'Start the sign-in again in a moment.',
};
