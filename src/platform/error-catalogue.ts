/**
 * The one error catalogue. Codes and names are part of the interface: never renumber or rename an entry,
 * only add. Each module adds its entries in its own range:
 *
 *   10xxx  request (any endpoint)            11xxx  authentication and grants
 *   12xxx  developer applications            13xxx  interaction logs
 *   14xxx  messenger users and linked accounts  15xxx  ping history
 *   16xxx  players and profiles              19xxx  server
 */
export const catalogue = {
  BAD_REQUEST: { code: 10000, status: 400, reason: 'The request could not be understood.' },
  MALFORMED_JSON: { code: 10001, status: 400, reason: 'The request body is not valid JSON.' },
  MISSING_FIELD: { code: 10002, status: 400, reason: 'A required field is missing.' },
  INVALID_FIELD: { code: 10003, status: 400, reason: 'A field has a value that is not allowed.' },
  UNKNOWN_FIELD: { code: 10004, status: 400, reason: 'The request has a field this endpoint does not take.' },
  UNSUPPORTED_MEDIA_TYPE: { code: 10005, status: 415, reason: 'The request body must be application/json.' },
  BODY_TOO_LARGE: { code: 10006, status: 413, reason: 'The request body is too large.' },
  ROUTE_NOT_FOUND: { code: 10007, status: 404, reason: 'There is no such endpoint.' },
  METHOD_NOT_ALLOWED: { code: 10008, status: 405, reason: 'The endpoint does not take this method.' },
  RATE_LIMITED: { code: 10009, status: 429, reason: 'Too many requests; wait a little and try again.' },
  BODY_TOO_DEEP: { code: 10010, status: 400, reason: 'The request body is nested too deeply.' },
  REQUEST_TIMEOUT: {
    code: 10011,
    status: 408,
    reason: 'The request did not arrive in time; send it again, all at once.',
  },
  URI_TOO_LONG: { code: 10012, status: 414, reason: 'The request path is too long.' },
  WORK_BUDGET_EXHAUSTED: {
    code: 10013,
    status: 429,
    reason: "You have used your share of the service's work for now; try again after Retry-After.",
  },
  TOO_MANY_IN_FLIGHT: {
    code: 10014,
    status: 429,
    reason: 'You have as many requests in progress as allowed; wait for one to finish.',
  },
  EXPECTATION_FAILED: {
    code: 10015,
    status: 417,
    reason: 'The request expects something the service does not do (Expect: only 100-continue is taken).',
  },
  TOKEN_MISSING: {
    code: 11001,
    status: 401,
    reason: 'This endpoint needs an access token: /docs#getting-a-token says where one comes from.',
  },
  TOKEN_INVALID: { code: 11002, status: 401, reason: 'The access token is not valid.' },
  TOKEN_EXPIRED: { code: 11003, status: 401, reason: 'The access token has expired.' },
  TOKEN_REVOKED: {
    code: 11004,
    status: 401,
    reason:
      'The access token has been revoked: get a new one with your application key (/docs#getting-a-token).',
  },
  TOKEN_REUSED: {
    code: 11005,
    status: 401,
    reason: 'The token was already exchanged; every token of its chain is now revoked.',
  },
  GRANT_MISSING: { code: 11006, status: 403, reason: 'The access token does not grant this.' },
  EXPIRES_AT_MISMATCH: { code: 11007, status: 400, reason: 'expires_at does not match the token.' },
  NOT_RESOURCE_OWNER: {
    code: 11008,
    status: 403,
    reason: 'Only the owner of this resource, or a token with the grant that opens it, may do this.',
  },
  TOKEN_NO_OWNER: {
    code: 11009,
    status: 401,
    reason: 'The access token does not say who its owner is.',
  },
  KEY_INVALID: {
    code: 11010,
    status: 401,
    reason: 'The application key is not valid: it was never issued, or it has ended.',
  },
  CSRF_TOKEN_INVALID: {
    code: 11011,
    status: 403,
    reason: 'This request needs the sign-in session’s CSRF token; reload the page and try again.',
  },
  SIGN_IN_STATE_INVALID: {
    code: 11012,
    status: 400,
    reason: 'This sign-in link is not valid any more; start the sign-in again.',
  },
  SIGN_IN_REJECTED: {
    code: 11013,
    status: 400,
    reason: 'Discord did not accept the sign-in; start it again.',
  },
  RETURN_PATH_INVALID: {
    code: 11014,
    status: 400,
    reason: 'After signing in you can only be sent back to a page of the developer portal.',
  },
  SESSION_INVALID: {
    code: 11015,
    status: 401,
    reason: 'Your sign-in session has ended; sign in again.',
  },
  IDENTITY_REQUIRED: {
    code: 11016,
    status: 403,
    reason:
      'Keys are managed from the developer portal, or with an identity token: not with a token that carries grants.',
  },
  APPLICATION_NOT_FOUND: { code: 12001, status: 404, reason: 'There is no such application.' },
  APPLICATION_STATE_CONFLICT: {
    code: 12002,
    status: 409,
    reason: 'The application cannot make that change from the state it is in.',
  },
  TOO_MANY_PENDING_APPLICATIONS: {
    code: 12003,
    status: 409,
    reason: 'You have as many pending applications as allowed; withdraw one or wait for a decision.',
  },
  OWNER_MISMATCH: {
    code: 12004,
    status: 400,
    reason: 'The owner given is not the owner of the access token.',
  },
  NOT_APPLICATION_OWNER: {
    code: 12005,
    status: 403,
    reason: "Only the application's owner may do this.",
  },
  OWN_APPLICATION_REVIEW: {
    code: 12006,
    status: 403,
    reason: 'A reviewer may not approve their own application.',
  },
  OPERATOR_ONLY_GRANT: {
    code: 12007,
    status: 400,
    reason: 'An application may not ask for a grant that only an operator gives.',
  },
  KEY_ALREADY_COLLECTED: {
    code: 12008,
    status: 409,
    reason: "The application's key was already collected; rotate it to get a new one.",
  },
  KEY_NOT_AVAILABLE: {
    code: 12009,
    status: 409,
    reason: 'The application has no key: a key comes with approval and ends with the application.',
  },
  MESSENGER_USER_NOT_FOUND: { code: 14001, status: 404, reason: 'There is no such user.' },
  ACCOUNT_LINKED_ELSEWHERE: {
    code: 14002,
    status: 409,
    reason: 'This Minecraft account is linked to another user.',
  },
  TOO_MANY_LINKED_ACCOUNTS: {
    code: 14003,
    status: 409,
    reason: 'This user has as many linked Minecraft accounts as allowed.',
  },
  ACCOUNT_NOT_LINKED: {
    code: 14004,
    status: 404,
    reason: 'This Minecraft account is not linked to this user.',
  },
  LINK_NOT_VERIFIED: {
    code: 14005,
    status: 409,
    reason: "The player's Hypixel profile does not link this Discord user.",
  },
  USERNAME_UNKNOWN: {
    code: 14006,
    status: 409,
    reason: "The user's Discord username is not known, so the link cannot be verified.",
  },
  PLAYER_NOT_FOUND: { code: 14007, status: 404, reason: 'No Minecraft player has this username.' },
  INTERNAL_ERROR: { code: 19001, status: 500, reason: 'Something went wrong on our side.' },
  SHUTTING_DOWN: { code: 19002, status: 503, reason: 'The service is restarting; try again shortly.' },
  DEPENDENCY_UNAVAILABLE: {
    code: 19003,
    status: 503,
    reason: 'A service this one depends on is unavailable.',
  },
  WRITE_QUEUE_FULL: {
    code: 19004,
    status: 503,
    reason: 'The service has more writes waiting than it takes; try again in a moment.',
  },
  UPSTREAM_THROTTLED: {
    code: 19005,
    status: 429,
    reason: 'Hypixel or Mojang is throttling requests; try again after Retry-After.',
  },
  UPSTREAM_TIMEOUT: { code: 19006, status: 504, reason: 'Hypixel or Mojang did not answer in time.' },
  UPSTREAM_UNAVAILABLE: { code: 19007, status: 503, reason: 'Hypixel or Mojang is unavailable.' },
  UPSTREAM_BAD_GATEWAY: {
    code: 19008,
    status: 502,
    reason: 'Hypixel or Mojang gave an answer that cannot be used.',
  },
  DISCORD_UNAVAILABLE: {
    code: 19009,
    status: 502,
    reason: 'Discord did not answer the sign-in as expected; try again in a moment.',
  },
} as const satisfies Record<string, { code: number; status: number; reason: string }>;

export type ErrorName = keyof typeof catalogue;
