/**
 * Generated from the Player Data Service's OpenAPI document by `npm run client:types`
 * (scripts/openapi-types.ts, openapi-typescript). Do not edit: `npm test` fails when this file is not
 * what the document makes.
 *
 * 64-bit IDs (`format: uint64`) are typed as strings: the client parses answers with a JSON parser that
 * keeps big integers and hands IDs over as their exact decimal digits.
 */

export interface paths {
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This OpenAPI document */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The documentation page: getting started, the endpoints, the error catalogue */
        get: operations["getDocsPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: database reachable, migrations applied, Redis reachable when configured */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics: requests by route and status, latency histograms, process metrics
         * @description Public unless METRICS_TOKEN is set (the production setting): then it needs `Authorization: Bearer <METRICS_TOKEN>`.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Refresh an authentication token
         * @description Exchanges a token (valid, or expired for at most the refresh window, 7 days by default) for a new one with the same owner and grants. Each token can be exchanged once: presenting an exchanged token again revokes every token of its chain (reuse detection) and answers 401. Limited per client address (RateLimit policy "address").
         */
        post: operations["refreshToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Who you are, and where you stand in your limits
         * @description The token's owner, grants and expiry; the owner's budget of the service's work and their share of the upstream key, as the RateLimit headers of every answer say them. Any valid token, or the portal's session.
         */
        get: operations["getCaller"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List developer applications
         * @description Newest first, a page at a time (`cursor` is the `next_cursor` of the page before). With the applications:review grant, everyone's, filtered by `state` and `owner`; otherwise your own only (`owner`, if given, must be you).
         */
        get: operations["listApplications"];
        put?: never;
        /**
         * Create a developer application
         * @description Applies for grants. The owner is the access token's owner (`owner` in the body, when sent, must be it); `id`, `applied_at` and `currentState` are assigned by the service and ignored when sent. The new application is pending. An owner may have a limited number of pending applications (5 by default): beyond it, 409. Any valid token.
         */
        post: operations["createApplication"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one developer application
         * @description The application with its history (every change: from, to, when, who, why). Its owner, or a token with the applications:review grant.
         */
        get: operations["getApplication"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve a pending application
         * @description pending -> approved. Makes the application's key, which its owner collects (POST .../{id}/key): the answer carries no secret. A reviewer may not approve their own application, nor one asking for a grant only an operator gives. Grant: applications:review.
         */
        post: operations["approveApplication"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}/reject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reject a pending application
         * @description pending -> rejected (final). Grant: applications:review.
         */
        post: operations["rejectApplication"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke an approved application
         * @description approved -> revoked (final). Ends its key and every token made from it: they answer 401 from then on. Grant: applications:review.
         */
        post: operations["revokeApplication"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}/withdraw": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Withdraw your pending application
         * @description pending -> withdrawn (final). The application's owner only; any valid token of theirs.
         */
        post: operations["withdrawApplication"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}/key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Collect your approved application's key
         * @description The application's key, made on approval, collected once by the application's owner: the service keeps only its hash, so a second call is a 409; a lost key is replaced by rotating it. Exchange the key for tokens at POST /auth/token. Keys are managed with the portal session or an identity token (no grants); a token that carries grants is refused (403 IDENTITY_REQUIRED).
         */
        post: operations["collectApplicationKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}/key/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate your approved application's key
         * @description Ends the current key (collected or not, or already revoked) and every token made from it, and returns a new key, shown this once. The application's owner only, with the portal session or an identity token.
         */
        post: operations["rotateApplicationKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/developer/applications/{id}/key/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke your approved application's key
         * @description Ends the current key and every token made from it (they answer 401 from then on); the application stays approved, and rotating makes a new key. The application's owner only, with the portal session or an identity token.
         */
        post: operations["revokeApplicationKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange an application key for a token
         * @description Returns a token carrying the approved application's grants, for its owner, as often as needed (the OAuth 2.0 client-credentials way): a bot keeps its key and asks for a token when it starts or when its token expires (or refreshes the token at POST /auth/refresh). A key that was never issued, was rotated or revoked, or whose application was revoked: 401. Limited per client address (RateLimit policy "address").
         */
        post: operations["exchangeKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/messenger/logging/interaction": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List logged bot interactions
         * @description The caller's own logs (those its owner's tokens logged), newest first, a page at a time (`cursor` is the `next_cursor` of the page before), filtered by user, server and receive time. With the messenger:audit grant, every owner's, or one owner's with `owner`; without it, naming another owner is a 403 NOT_RESOURCE_OWNER. Never with the interaction tokens. Costs the owner's work budget a unit per 256 bytes of the logs returned, besides the request. Grant: messenger:read.
         */
        get: operations["listInteractionLogs"];
        put?: never;
        /**
         * Log a bot interaction
         * @description Stores the log with its receive time and the calling token's owner, and records the user and server it mentions. A 200 means the log is committed to the database. The interaction token is never stored or logged. Logging the same interaction again (same token) answers its first record and stores nothing. Grant: messenger:log.
         */
        post: operations["logInteraction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/player/{player}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Fetch a player's data
         * @description The Hypixel player object for a UUID or username, from the cache while fresh (60 s by default), otherwise from the upstream; a stale copy (up to 24 h old) stands in when the upstream fails. Failures of the lookup answer in the result shape `{success: false, cause, throttle, player: null}`, anything else an ErrorResponse. Grant: player:read.
         */
        get: operations["getPlayer"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/players": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Fetch many players at once
         * @description 1 to 100 players (UUIDs, dashed or not, or usernames) in one call. Each result is exactly the body `GET /player/{player}` would answer for that player: cached copies are served, misses are fetched within the caller's share of the upstream key, and the rest answer `throttle: true`. Any number of spellings of one player cost one upstream call; the same string given twice is one result. Misses go out 8 at a time; cache hits never wait for them. The answer is 200 whatever each item says. Costs the owner's work budget a unit per distinct player (the request's unit included) and a unit per KiB of body, taken before any lookup (429 when the budget cannot pay: nothing is looked up). Sent uncompressed. Grant: player:read.
         */
        post: operations["getPlayers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/player/{player}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A player's values over time
         * @description The values of up to 50 fields (JSON Pointers into the player object) at each snapshot the service stored of the player in the range, oldest first: a snapshot is stored at each lookup that found the player changed. More snapshots than `limit` are thinned evenly. Kept HISTORY_RETENTION_DAYS (365 by default). 404 when no snapshot of the player was ever stored. Costs the owner's work budget a unit per point returned and per 64 KiB of full copies read, besides the request. Grant: player:read.
         */
        get: operations["getPlayerHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/player/{player}/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A player's play sessions
         * @description Play sessions read from the player's snapshots in the range and their `lastLogin`/`lastLogout`, newest first, each with the numeric values that changed over it (from the snapshot before the login to the session's last). A player who hides their online status shows none. 404 when no snapshot of the player was ever stored. Read from at most the 5000 newest snapshots in the range. Costs the owner's work budget a unit per session returned, per 100 snapshots read and per 64 KiB of full copies read, besides the request. Grant: player:read.
         */
        get: operations["getPlayerSessions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/gamemode/profiles/{player}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a player's game-mode (SkyBlock) profiles
         * @description The SkyBlock profiles of a UUID or username (`[]` when there are none), cached for 120 s by default, with the failures and cache headers of /player/{player}. Grant: profiles:read.
         */
        get: operations["getGamemodeProfiles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/messenger/user/{snowflake}/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a Discord user's profile and linked Minecraft accounts
         * @description The user in the caller's view (its owner's): a user it has logged or written is known (the locale en-US until set, no accounts until it links one); any other is 404, whatever other owners know. The primary account first, then in link order. With the messenger:audit grant, `owner` reads that owner's view; without it, naming another owner is a 403 NOT_RESOURCE_OWNER. Grant: messenger:read.
         */
        get: operations["getMessengerUserProfile"];
        /**
         * Set a Discord user's locale
         * @description A BCP 47 language tag, kept in canonical form; creates the user in the caller's view when new. Grant: messenger:write.
         */
        put: operations["setMessengerUserLocale"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/messenger/user/{snowflake}/accounts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Link a Minecraft account to a Discord user
         * @description By UUID or username (resolved through the cache and the upstream budget); creates the user in the caller's view when new. The first account linked is primary. 409 when another user of the caller's view has the account, when the user has MESSENGER_MAX_LINKED_ACCOUNTS already, or when verification fails (against the username the caller's own logs last gave the user); upstream trouble during resolution or verification answers 429/502/503/504 as /gamemode/profiles does, and links nothing. Grant: messenger:write.
         */
        post: operations["linkMinecraftAccount"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/messenger/user/{snowflake}/accounts/{uuid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Unlink a Minecraft account from a Discord user
         * @description When it was the primary, the oldest remaining account becomes primary. Grant: messenger:write.
         */
        delete: operations["unlinkMinecraftAccount"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/messenger/user/{snowflake}/accounts/{uuid}/primary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Make a linked Minecraft account the user's primary
         * @description Grant: messenger:write.
         */
        put: operations["setPrimaryMinecraftAccount"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ping/{player}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a player's ping history
         * @description One record per UTC day with samples, newest first: avg, min and max over all its samples, its history (the latest values, in time order), and its last sample. A player with no samples: `{data: []}`. Read from per-day aggregates kept on write; an answer is kept while the player has no new sample, with an `ETag` (`If-None-Match` naming it: 304). Costs the owner's work budget a unit per day returned, besides the request. Grant: ping:read.
         */
        get: operations["getPingHistory"];
        put?: never;
        /**
         * Record a player's ping samples
         * @description 1 to 1000 samples, stored in one transaction, or none when one is invalid (400 naming it, up to 20). A sample equal to one already stored (same player, at, ping and lobby, whoever sent it) is stored once: a batch sent again changes nothing, and is answered with its samples as duplicates. `at` may be at most PING_MAX_FUTURE_SECONDS (60 by default) after the request is received. A 200 means the new samples are committed, with the daily statistics they fall on. A username is resolved to its UUID. Costs the owner's work budget a unit per sample, besides the request and its body, taken before the samples are written (429 when the budget cannot pay). Grant: ping:write.
         */
        post: operations["ingestPingSamples"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description Every error answer, with one `extra` entry per problem.
         *
         *     Every error answers an `ErrorResponse`; each `extra[]` entry names one problem by a stable code and name (the catalogue, also at [/docs#errors](/docs#errors)):
         *
         *     | code | name | usual HTTP status | meaning | how to fix |
         *     |---|---|---|---|---|
         *     | 10000 | BAD_REQUEST | 400 | The request could not be understood. | Read `developer_reason`; send the request as this endpoint's operation in /openapi.json describes it. |
         *     | 10001 | MALFORMED_JSON | 400 | The request body is not valid JSON. | Send the body as JSON text (`JSON.stringify`), not a form or a string with quotes missing. |
         *     | 10002 | MISSING_FIELD | 400 | A required field is missing. | Add the field `developer_reason` names; the operation's request schema lists the required ones. |
         *     | 10003 | INVALID_FIELD | 400 | A field has a value that is not allowed. | Change the field `developer_reason` names to a value its schema allows (its type, pattern or range). |
         *     | 10004 | UNKNOWN_FIELD | 400 | The request has a field this endpoint does not take. | Leave out the field `developer_reason` names: the endpoint takes only the fields of its schema. |
         *     | 10005 | UNSUPPORTED_MEDIA_TYPE | 415 | The request body must be application/json. | Send `Content-Type: application/json` with a JSON body. |
         *     | 10006 | BODY_TOO_LARGE | 413 | The request body is too large. | Send a smaller body: fewer items per request, split across several requests. |
         *     | 10007 | ROUTE_NOT_FOUND | 404 | There is no such endpoint. | Check the method and path against the endpoints above (e.g. `/player/{player}`, not `/players/{player}`). |
         *     | 10008 | METHOD_NOT_ALLOWED | 405 | The endpoint does not take this method. | Use one of the methods the `Allow` header lists for this path. |
         *     | 10009 | RATE_LIMITED | 429 | Too many requests; wait a little and try again. | Wait the seconds of `Retry-After` before sending again; space out requests from this address. |
         *     | 10010 | BODY_TOO_DEEP | 400 | The request body is nested too deeply. | Flatten the body: nest objects and arrays less deeply. |
         *     | 10011 | REQUEST_TIMEOUT | 408 | The request did not arrive in time; send it again, all at once. | Send the whole request promptly, in one go; check the client's connection. |
         *     | 10012 | URI_TOO_LONG | 414 | The request path is too long. | Shorten the path and query; send long lists in a body (`POST /players`). |
         *     | 10013 | WORK_BUDGET_EXHAUSTED | 429 | You have used your share of the service's work for now; try again after Retry-After. | Wait `Retry-After` seconds; cache answers, batch reads, and watch `RateLimit` (or `GET /auth/me`). |
         *     | 10014 | TOO_MANY_IN_FLIGHT | 429 | You have as many requests in progress as allowed; wait for one to finish. | Send fewer requests at once: await answers before sending more (a small queue or pool). |
         *     | 10015 | EXPECTATION_FAILED | 417 | The request expects something the service does not do (Expect: only 100-continue is taken). | Leave out the `Expect` header, or send `Expect: 100-continue` (the only one taken). |
         *     | 11001 | TOKEN_MISSING | 401 | This endpoint needs an access token: /docs#getting-a-token says where one comes from. | Send `Authorization: Bearer <token>`; get a token as /docs#getting-a-token says. |
         *     | 11002 | TOKEN_INVALID | 401 | The access token is not valid. | Send the token exactly as `POST /auth/token` gave it, after `Bearer ` (a token of this service, not a key). |
         *     | 11003 | TOKEN_EXPIRED | 401 | The access token has expired. | Get a new token: exchange your key at `POST /auth/token` again, or refresh at `POST /auth/refresh`. |
         *     | 11004 | TOKEN_REVOKED | 401 | The access token has been revoked: get a new one with your application key (/docs#getting-a-token). | Exchange your application key for a new token at `POST /auth/token`. |
         *     | 11005 | TOKEN_REUSED | 401 | The token was already exchanged; every token of its chain is now revoked. | Refresh each token once and keep the new one; exchange your key at `POST /auth/token` to start a new chain. |
         *     | 11006 | GRANT_MISSING | 403 | The access token does not grant this. | Use a token with the grant this endpoint names (its scope); apply for an application with that grant. |
         *     | 11007 | EXPIRES_AT_MISMATCH | 400 | expires_at does not match the token. | Send the `expires_at` that came with the token, unchanged, or leave it out. |
         *     | 11008 | NOT_RESOURCE_OWNER | 403 | Only the owner of this resource, or a token with the grant that opens it, may do this. | Use a token of the resource's owner, or one with the grant that opens others' resources. |
         *     | 11009 | TOKEN_NO_OWNER | 401 | The access token does not say who its owner is. | Use a token issued for an owner: exchange an application key at `POST /auth/token`. |
         *     | 11010 | KEY_INVALID | 401 | The application key is not valid: it was never issued, or it has ended. | Use the current key of an approved application: collect or rotate it in the portal (or `.../key/rotate`). |
         *     | 11011 | CSRF_TOKEN_INVALID | 403 | This request needs the sign-in session’s CSRF token; reload the page and try again. | Send the CSRF token of `GET /auth/session` in `X-CSRF-Token`; in the portal, reload the page. |
         *     | 11012 | SIGN_IN_STATE_INVALID | 400 | This sign-in link is not valid any more; start the sign-in again. | Start the sign-in again from `GET /auth/discord/login` (the portal's Sign in button). |
         *     | 11013 | SIGN_IN_REJECTED | 400 | Discord did not accept the sign-in; start it again. | Start the sign-in again and approve the service in Discord's consent page. |
         *     | 11014 | RETURN_PATH_INVALID | 400 | After signing in you can only be sent back to a page of the developer portal. | Give a return path under `/portal/`, or none. |
         *     | 11015 | SESSION_INVALID | 401 | Your sign-in session has ended; sign in again. | Sign in to the portal again. |
         *     | 11016 | IDENTITY_REQUIRED | 403 | Keys are managed from the developer portal, or with an identity token: not with a token that carries grants. | Manage keys signed in to the portal, or with an identity token of the owner (no grants). |
         *     | 12001 | APPLICATION_NOT_FOUND | 404 | There is no such application. | Check the application's id: list yours with `GET /admin/developer/applications`. |
         *     | 12002 | APPLICATION_STATE_CONFLICT | 409 | The application cannot make that change from the state it is in. | Read the application's `state` first (`GET .../{id}`); `developer_reason` names the changes its state allows. |
         *     | 12003 | TOO_MANY_PENDING_APPLICATIONS | 409 | You have as many pending applications as allowed; withdraw one or wait for a decision. | Withdraw a pending application (`POST .../{id}/withdraw`) or wait for a reviewer's decision. |
         *     | 12004 | OWNER_MISMATCH | 400 | The owner given is not the owner of the access token. | Leave `owner` out (it is the token's owner) or give your own Discord ID. |
         *     | 12005 | NOT_APPLICATION_OWNER | 403 | Only the application's owner may do this. | Use a token or portal session of the application's owner. |
         *     | 12006 | OWN_APPLICATION_REVIEW | 403 | A reviewer may not approve their own application. | Ask another reviewer to decide on your own application. |
         *     | 12007 | OPERATOR_ONLY_GRANT | 400 | An application may not ask for a grant that only an operator gives. | Ask only for developer grants (see /docs#grants); operator grants come from the command line. |
         *     | 12008 | KEY_ALREADY_COLLECTED | 409 | The application's key was already collected; rotate it to get a new one. | Rotate the key (`POST .../{id}/key/rotate`) to get a new one; the old one ends. |
         *     | 12009 | KEY_NOT_AVAILABLE | 409 | The application has no key: a key comes with approval and ends with the application. | Wait for approval (the key comes with it); an ended application needs a new application. |
         *     | 14001 | MESSENGER_USER_NOT_FOUND | 404 | There is no such user. | Check the Discord ID; a user is created by `PUT .../profile` or by linking an account. |
         *     | 14002 | ACCOUNT_LINKED_ELSEWHERE | 409 | This Minecraft account is linked to another user. | Unlink the account from the other user first, or link another account. |
         *     | 14003 | TOO_MANY_LINKED_ACCOUNTS | 409 | This user has as many linked Minecraft accounts as allowed. | Unlink an account (`DELETE .../accounts/{uuid}`) before linking another. |
         *     | 14004 | ACCOUNT_NOT_LINKED | 404 | This Minecraft account is not linked to this user. | Check the UUID against the user's linked accounts (`GET .../profile`). |
         *     | 14005 | LINK_NOT_VERIFIED | 409 | The player's Hypixel profile does not link this Discord user. | Have the player set their Discord username in Hypixel's social menu, then try again. |
         *     | 14006 | USERNAME_UNKNOWN | 409 | The user's Discord username is not known, so the link cannot be verified. | Send `username` with the link, or log an interaction of the user first (it records their username). |
         *     | 14007 | PLAYER_NOT_FOUND | 404 | No Minecraft player has this username. | Check the username's spelling, or give the player's UUID. |
         *     | 19001 | INTERNAL_ERROR | 500 | Something went wrong on our side. | Retry later; if it persists, report it with the answer's `X-Request-Id`. |
         *     | 19002 | SHUTTING_DOWN | 503 | The service is restarting; try again shortly. | Retry after `Retry-After`: another instance will answer. |
         *     | 19003 | DEPENDENCY_UNAVAILABLE | 503 | A service this one depends on is unavailable. | Retry after `Retry-After`, with backoff. |
         *     | 19004 | WRITE_QUEUE_FULL | 503 | The service has more writes waiting than it takes; try again in a moment. | Retry shortly with backoff; send fewer writes at once. |
         *     | 19005 | UPSTREAM_THROTTLED | 429 | Hypixel or Mojang is throttling requests; try again after Retry-After. | Wait `Retry-After` seconds; prefer cached reads and batch lookups (`POST /players`). |
         *     | 19006 | UPSTREAM_TIMEOUT | 504 | Hypixel or Mojang did not answer in time. | Retry later with backoff. |
         *     | 19007 | UPSTREAM_UNAVAILABLE | 503 | Hypixel or Mojang is unavailable. | Retry later with backoff; cached data may still be served. |
         *     | 19008 | UPSTREAM_BAD_GATEWAY | 502 | Hypixel or Mojang gave an answer that cannot be used. | Retry later; if it persists, report it with the answer's `X-Request-Id`. |
         *     | 19009 | DISCORD_UNAVAILABLE | 502 | Discord did not answer the sign-in as expected; try again in a moment. | Start the sign-in again in a moment. |
         */
        ErrorResponse: {
            /** @enum {boolean} */
            success: false;
            /** @description The HTTP status. */
            code: number;
            cause: string;
            /** @description Link to the docs page section for this error. */
            documentation: string;
            /** @description The server's epoch milliseconds when the error was produced. */
            msTime: number;
            extra: {
                /** @description Stable catalogue code of this problem (see the docs page). */
                code: number;
                /** @description Stable catalogue name, SCREAMING_SNAKE_CASE. */
                name: string;
                /** @description Safe to show an end user. */
                reason: string;
                /** @description What the developer should fix. */
                developer_reason: string;
            }[];
        };
        /** @description Bed Wars statistics (`stats.Bedwars`): all modes together; per mode under prefixed names (`eight_one_wins_bedwars`). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. */
        BedwarsStats: {
            /** @description Bed Wars experience, from which the Bed Wars level (stars) is derived. */
            Experience?: number;
            coins?: number;
            /** @description The current win streak. */
            winstreak?: number;
            games_played_bedwars?: number;
            wins_bedwars?: number;
            losses_bedwars?: number;
            kills_bedwars?: number;
            deaths_bedwars?: number;
            final_kills_bedwars?: number;
            final_deaths_bedwars?: number;
            beds_broken_bedwars?: number;
            beds_lost_bedwars?: number;
            resources_collected_bedwars?: number;
            iron_resources_collected_bedwars?: number;
            gold_resources_collected_bedwars?: number;
            diamond_resources_collected_bedwars?: number;
            emerald_resources_collected_bedwars?: number;
        } & {
            [key: string]: unknown;
        };
        /** @description SkyWars statistics (`stats.SkyWars`). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. */
        SkyWarsStats: {
            /** @description SkyWars experience, from which the SkyWars level is derived. */
            skywars_experience?: number;
            coins?: number;
            wins?: number;
            losses?: number;
            kills?: number;
            deaths?: number;
            games_played_skywars?: number;
            /** @description The current win streak. */
            win_streak?: number;
        } & {
            [key: string]: unknown;
        };
        /** @description Duels statistics (`stats.Duels`). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. */
        DuelsStats: {
            coins?: number;
            wins?: number;
            losses?: number;
            kills?: number;
            deaths?: number;
            games_played_duels?: number;
            /** @description The current win streak, all duels together. */
            current_winstreak?: number;
            /** @description The best win streak, all duels together. */
            best_overall_winstreak?: number;
        } & {
            [key: string]: unknown;
        };
        /** @description Murder Mystery statistics (`stats.MurderMystery`). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. */
        MurderMysteryStats: {
            coins?: number;
            wins?: number;
            /** @description Games played. */
            games?: number;
            kills?: number;
            deaths?: number;
        } & {
            [key: string]: unknown;
        };
        /** @description The player's statistics, by game as Hypixel names them (`Bedwars`, `SkyWars`, `Walls3`...). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. */
        PlayerStats: {
            Bedwars?: components["schemas"]["BedwarsStats"];
            SkyWars?: components["schemas"]["SkyWarsStats"];
            Duels?: components["schemas"]["DuelsStats"];
            MurderMystery?: components["schemas"]["MurderMysteryStats"];
            Arcade?: {
                coins?: number;
            } & {
                [key: string]: unknown;
            };
            TNTGames?: {
                coins?: number;
                wins?: number;
            } & {
                [key: string]: unknown;
            };
            UHC?: {
                coins?: number;
                wins?: number;
                kills?: number;
                deaths?: number;
                /** @description UHC score, from which the UHC star is derived. */
                score?: number;
            } & {
                [key: string]: unknown;
            };
            Pit?: {
                profile?: {
                    /** @description The Pit experience, from which the prestige and level are derived. */
                    xp?: number;
                } & {
                    [key: string]: unknown;
                };
                /** @description The Pit's statistics. */
                pit_stats_ptl?: {
                    kills?: number;
                    deaths?: number;
                } & {
                    [key: string]: unknown;
                };
            } & {
                [key: string]: unknown;
            };
            SkyBlock?: {
                /** @description The player's SkyBlock profiles by ID (undashed): each profile's ID and name. The profiles themselves: `GET /gamemode/profiles/{player}`. */
                profiles?: {
                    [key: string]: {
                        /** @description The profile's ID. */
                        profile_id?: string;
                        /** @description The profile's name in game (a fruit: `Apple`, `Banana`...). */
                        cute_name?: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** @description A Hypixel player (`player` of Hypixel's `/v2/player`). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. An integer beyond 2^53 keeps its digits (the TypeScript client reads it as a string). */
        HypixelPlayer: {
            /** @description Hypixel's ID of the player's record. */
            _id?: string;
            /** @description The player's Minecraft UUID, undashed. */
            uuid?: string;
            /** @description The player's username, as written in Minecraft (as of their last login). */
            displayname?: string;
            /** @description The username in lower case. */
            playername?: string;
            /** @description The usernames the player has had on Hypixel. */
            knownAliases?: string[];
            /** @description The player's first login (epoch milliseconds). */
            firstLogin?: number;
            /** @description Their last login; absent when the player hides their online status, like `lastLogout` (epoch milliseconds). */
            lastLogin?: number;
            /** @description Their last logout (epoch milliseconds). */
            lastLogout?: number;
            /** @description Network experience, from which the network level is derived; not always whole. */
            networkExp?: number;
            karma?: number;
            achievementPoints?: number;
            /** @description A staff or special rank (`ADMIN`, `GAME_MASTER`, `YOUTUBER`...); absent (or `NORMAL`) otherwise. */
            rank?: string;
            /** @description The rank bought, on older players' records (`VIP`...`MVP_PLUS`); see `newPackageRank`. */
            packageRank?: string;
            /** @description The rank bought: `VIP`, `VIP_PLUS`, `MVP`, `MVP_PLUS` (or `NONE`). */
            newPackageRank?: string;
            /** @description `SUPERSTAR` while the player has MVP++; `NONE` otherwise. */
            monthlyPackageRank?: string;
            /** @description The colour of the `+` of an MVP+ or MVP++ rank (`RED`, `GOLD`...). */
            rankPlusColor?: string;
            /** @description The colour of an MVP++ rank's name (`GOLD` or `AQUA`). */
            monthlyRankColor?: string;
            /** @description A prefix that replaces the rank, with Minecraft formatting codes (`§`), on a few records. */
            prefix?: string;
            /** @description The language chosen in game (`ENGLISH`...). */
            userLanguage?: string;
            /** @description The type of the last game played (`BEDWARS`, `SKYWARS`...). */
            mostRecentGameType?: string;
            /** @description The chat channel the player last talked in (`ALL`, `PARTY`, `GUILD`...). */
            channel?: string;
            /** @description Tiered achievements' progress, by achievement name (`bedwars_level`, `general_wins`...). */
            achievements?: {
                [key: string]: number;
            };
            /** @description The names of the one-time achievements earned. Not typed: Hypixel has served other values than names in it (arrays). */
            achievementsOneTime?: unknown[];
            /** @description The player's social media, as they set them in game. */
            socialMedia?: {
                /** @description The accounts the player linked in game, by network. */
                links?: {
                    /** @description The Discord username the player set in game: what linking an account with `verify: true` (`POST /messenger/user/{snowflake}/accounts`) compares with the user's. */
                    DISCORD?: string;
                    TWITTER?: string;
                    YOUTUBE?: string;
                    TWITCH?: string;
                    /** @description A link to the player's hypixel.net forums profile. */
                    HYPIXEL?: string;
                } & {
                    [key: string]: unknown;
                };
                prompt?: boolean;
            } & {
                [key: string]: unknown;
            };
            stats?: components["schemas"]["PlayerStats"];
        } & {
            [key: string]: unknown;
        };
        /** @description A member of a SkyBlock profile (`members[uuid]`). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. */
        SkyBlockMember: {
            /** @description The member's Minecraft UUID, undashed. */
            player_id?: string;
            profile?: {
                /** @description When the member joined the profile (epoch milliseconds). */
                first_join?: number;
                /** @description Coins in the member's personal bank. */
                bank_account?: number;
                /** @description Present when the member left the profile or was removed from it (its `timestamp`). Not typed here. */
                deletion_notice?: unknown;
            } & {
                [key: string]: unknown;
            };
            currencies?: {
                /** @description Coins in the purse (not always whole). */
                coin_purse?: number;
                /** @description Motes in the purse (the Rift's currency). */
                motes_purse?: number;
            } & {
                [key: string]: unknown;
            };
            leveling?: {
                /** @description SkyBlock experience: the SkyBlock level is a hundredth of it. */
                experience?: number;
            } & {
                [key: string]: unknown;
            };
            fairy_soul?: {
                /** @description Fairy souls found. */
                total_collected?: number;
                /** @description Fairy souls not yet exchanged. */
                unspent_souls?: number;
            } & {
                [key: string]: unknown;
            };
            player_data?: {
                /** @description Skill experience by skill (`SKILL_COMBAT`, `SKILL_MINING`...); absent when the player hides their skills. */
                experience?: {
                    [key: string]: number;
                };
            } & {
                [key: string]: unknown;
            };
            /** @description Slayer bosses: experience and kills by boss. Not typed here. */
            slayer?: unknown;
            /** @description The Catacombs: classes, floors completed, experience. Not typed here. */
            dungeons?: unknown;
            /** @description Pets: `pets_data.pets`, each with its type, tier and experience. Not typed here. */
            pets_data?: unknown;
            /** @description Kills, deaths and other counters by name. Not typed here. */
            player_stats?: unknown;
        } & {
            [key: string]: unknown;
        };
        /** @description A SkyBlock profile (an item of `profiles` of Hypixel's `/v2/skyblock/profiles`). As Hypixel sent it, unchecked: the fields named are the commonly used ones, typed as Hypixel sends them (Hypixel does not guarantee its types); any of them may be missing, and any other field may be there. */
        SkyBlockProfile: {
            /** @description The profile's ID (a UUID). */
            profile_id?: string;
            /** @description The profile's name in game (a fruit: `Apple`, `Banana`...). */
            cute_name?: string;
            /** @description True for the profile the player has selected. */
            selected?: boolean;
            /** @description The profile's special mode (`ironman`, `island`, `bingo`...); absent for a classic one. */
            game_mode?: string;
            /** @description The profile's members, by their Minecraft UUID (undashed). */
            members?: {
                [key: string]: components["schemas"]["SkyBlockMember"];
            };
            /** @description The profile's bank; absent when its members hide their banking. */
            banking?: {
                /** @description Coins in the bank. */
                balance?: number;
                /** @description The latest deposits and withdrawals. */
                transactions?: unknown[];
            } & {
                [key: string]: unknown;
            };
            /** @description The profile's community shop upgrades. Not typed here. */
            community_upgrades?: unknown;
        } & {
            [key: string]: unknown;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description The version of the API that answered. */
        "API-Version": "4.0";
        /** @description The request's id, in the log line of the request too: the client's own `X-Request-Id` when it is sane (1 to 128 of `A-Za-z0-9._:-`), otherwise a new UUID. */
        "X-Request-Id": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 document of this service. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Names this version of the answer (with `-br` or `-gzip` for a compressed copy): sent back in `If-None-Match`, it gets a 304 while the answer is unchanged. */
                    ETag: string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description The client already has this version (`If-None-Match` named its `ETag`): no body. */
            304: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Names this version of the answer (with `-br` or `-gzip` for a compressed copy): sent back in `If-None-Match`, it gets a 304 while the answer is unchanged. */
                    ETag: string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getDocsPage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An HTML page: getting started, every endpoint with its grant and an example, and every error with its anchor and fix. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Names this version of the answer (with `-br` or `-gzip` for a compressed copy): sent back in `If-None-Match`, it gets a 304 while the answer is unchanged. */
                    ETag: string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description The client already has this version (`If-None-Match` named its `ETag`): no body. */
            304: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Names this version of the answer (with `-br` or `-gzip` for a compressed copy): sent back in `If-None-Match`, it gets a 304 while the answer is unchanged. */
                    ETag: string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process is alive. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The instance can serve: its dependencies answer and its schema is up to date. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ready";
                        /** @description Each dependency checked: database, migrations, and redis when configured. */
                        checks: {
                            [key: string]: "ok";
                        };
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Not ready: each `extra` entry names a dependency that does not answer (the log says why; Retry-After: 2); or the instance is shutting down (Retry-After: 1). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Prometheus text exposition format. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    refreshToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description RefreshRequest: the token to exchange. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwMTIzNDU2NzgifQ.c2lnbmF0dXJl"
                 *     }
                 */
                "application/json": {
                    /** @description The token to exchange (valid, or expired within the refresh window). */
                    token: string;
                    /**
                     * Format: date-time
                     * @description The token's expiry as the service gave it (RFC 3339); when given it must match the token.
                     * @example 2026-11-22T04:05:17.000Z
                     */
                    expires_at?: string;
                };
            };
        };
        responses: {
            /** @description The new token; the one sent is exchanged. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description A JWT access token: send it as `Authorization: Bearer <token>`. */
                        token: string;
                        /**
                         * Format: date-time
                         * @description When the token expires (RFC 3339, UTC).
                         */
                        expires_at: string;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getCaller: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Who the caller is, and where they stand in their limits. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: uint64
                         * @description The token's owner (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                         */
                        owner: string;
                        /** @description The grants the token carries. */
                        grants: string[];
                        /** @description The token this request carried; null when it came with the portal’s session. */
                        token: {
                            /** @description The token's id (what an operator revokes it by). */
                            jti: string;
                            /**
                             * Format: date-time
                             * @description When the token expires (RFC 3339, UTC).
                             */
                            expires_at: string;
                        } | null;
                        /** @description The owner's budget of the service's work in cost units (RateLimit policy "work"), after this request. */
                        budget: {
                            /** @description Units per window (q of RateLimit-Policy). */
                            limit: number;
                            /** @description The window (w). */
                            window_seconds: number;
                            /** @description Units left now (r of RateLimit). */
                            remaining: number;
                            /** @description Seconds until the quota is whole again (t). */
                            reset_seconds: number;
                        };
                        /** @description The owner's usage today, as every instance counted it (stored every few seconds). */
                        usage_today: {
                            /**
                             * Format: date
                             * @description The UTC day.
                             */
                            day: string;
                            /** @description Requests made with the owner’s tokens or portal session today, whatever their answer. */
                            requests: number;
                            /** @description Lookups that reached Hypixel or Mojang on the owner’s behalf today (their share). */
                            upstream_lookups: number;
                            /** @description Requests refused with 429 today (work budget, requests in progress, upstream share). */
                            refused: number;
                        };
                        /** @description The owner's share of the upstream key; null until the service knows the key's limit. */
                        upstream: {
                            /** @description Units per window (q of RateLimit-Policy). */
                            limit: number;
                            /** @description The window (w). */
                            window_seconds: number;
                            /** @description Units left now (r of RateLimit). */
                            remaining: number;
                            /** @description Seconds until the quota is whole again (t). */
                            reset_seconds: number;
                        } | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    listApplications: {
        parameters: {
            query?: {
                /** @description Only applications in this state. */
                state?: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                /** @description Only this owner's applications (without the applications:review grant: your own only). 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer. */
                owner?: string;
                /** @description Page size (1 to 100); 20 unless given. */
                limit?: number;
                /** @description The `next_cursor` of the page before. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of applications. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Newest first. */
                        data: {
                            /**
                             * @description The application's id.
                             * @example 0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b
                             */
                            id: string;
                            /** @description The application's name. */
                            name: string;
                            /** @description What the application is for. */
                            description: string;
                            /**
                             * Format: uint64
                             * @description The applicant (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                             */
                            owner: string;
                            /** @description The grants applied for. */
                            grants: string[];
                            /**
                             * Format: date-time
                             * @description When the application was made (RFC 3339, UTC).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            applied_at: string;
                            /**
                             * @description pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.
                             * @enum {unknown}
                             */
                            currentState: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                        }[];
                        /** @description Pass as `cursor` for the next page; null on the last page. */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    createApplication: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description DeveloperApplication: what a developer applies for. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Guild stats bot",
                 *       "description": "Shows our guild members' Bed Wars stats in our Discord server.",
                 *       "grants": [
                 *         "player:read",
                 *         "messenger:log"
                 *       ]
                 *     }
                 */
                "application/json": {
                    /**
                     * @description The application's name.
                     * @example Guild stats bot
                     */
                    name: string;
                    /** @description What the application is for (empty when left out). */
                    description?: string;
                    /** @description The grants the application asks for: distinct, at least one, of player:read, profiles:read, ping:read, messenger:log, messenger:read, messenger:write. applications:review, ping:write, messenger:audit are given only by an operator: asking for one is a 400 (OPERATOR_ONLY_GRANT). */
                    grants: ("player:read" | "profiles:read" | "ping:read" | "messenger:log" | "messenger:read" | "messenger:write" | "applications:review" | "ping:write" | "messenger:audit")[];
                    /**
                     * @description The applicant: the access token's owner. Taken from the token; when sent it must match. 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer.
                     * @example 987654321098765432
                     */
                    owner?: string;
                    /** @description Assigned by the service: ignored when sent. */
                    readonly id?: string;
                    /**
                     * Format: date-time
                     * @description Assigned by the service: ignored when sent.
                     */
                    readonly applied_at?: string;
                    /**
                     * @description Assigned by the service: ignored when sent.
                     * @enum {string}
                     */
                    readonly currentState?: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                };
            };
        };
        responses: {
            /** @description The application as stored, pending. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application's id.
                         * @example 0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b
                         */
                        id: string;
                        /** @description The application's name. */
                        name: string;
                        /** @description What the application is for. */
                        description: string;
                        /**
                         * Format: uint64
                         * @description The applicant (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                         */
                        owner: string;
                        /** @description The grants applied for. */
                        grants: string[];
                        /**
                         * Format: date-time
                         * @description When the application was made (RFC 3339, UTC).
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        applied_at: string;
                        /**
                         * @description pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.
                         * @enum {unknown}
                         */
                        currentState: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An application with its history and its key's state. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application's id.
                         * @example 0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b
                         */
                        id: string;
                        /** @description The application's name. */
                        name: string;
                        /** @description What the application is for. */
                        description: string;
                        /**
                         * Format: uint64
                         * @description The applicant (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                         */
                        owner: string;
                        /** @description The grants applied for. */
                        grants: string[];
                        /**
                         * Format: date-time
                         * @description When the application was made (RFC 3339, UTC).
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        applied_at: string;
                        /**
                         * @description pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.
                         * @enum {unknown}
                         */
                        currentState: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                        /** @description Every state the application has been in, oldest first; the first entry is its making. */
                        history: {
                            /** @description The state before; null for the application being made. */
                            from: ("pending" | "approved" | "rejected" | "withdrawn" | "revoked") | null;
                            /**
                             * @description The state after.
                             * @enum {unknown}
                             */
                            to: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                            /**
                             * Format: date-time
                             * @description When (RFC 3339, UTC).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            at: string;
                            /** @description Who: a Discord ID (decimal digits), or `operator` for the command line. */
                            actor: string;
                            /** @description Why, when the actor said. */
                            reason: string | null;
                        }[];
                        /** @description Where the application's key stands; null before approval. */
                        key: {
                            /**
                             * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                             * @enum {unknown}
                             */
                            state: "uncollected" | "active" | "ended";
                            /**
                             * Format: date-time
                             * @description When the key was made (on approval, or by a rotation).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            made_at: string;
                            /** @description When its owner collected it; null until then. */
                            collected_at: string | null;
                            /** @description When it was last exchanged for a token; null if never. */
                            last_used_at: string | null;
                            /** @description When it ended; null while it has not. */
                            ended_at: string | null;
                            /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                            ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                        } | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    approveApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        /** @description An optional reason for the change (the body may be left out). */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "reason": "Checked with the developer on Discord."
                 *     }
                 */
                "application/json": {
                    /** @description Why; kept in the history. */
                    reason?: string;
                };
            };
        };
        responses: {
            /** @description An application with its history and its key's state. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application's id.
                         * @example 0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b
                         */
                        id: string;
                        /** @description The application's name. */
                        name: string;
                        /** @description What the application is for. */
                        description: string;
                        /**
                         * Format: uint64
                         * @description The applicant (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                         */
                        owner: string;
                        /** @description The grants applied for. */
                        grants: string[];
                        /**
                         * Format: date-time
                         * @description When the application was made (RFC 3339, UTC).
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        applied_at: string;
                        /**
                         * @description pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.
                         * @enum {unknown}
                         */
                        currentState: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                        /** @description Every state the application has been in, oldest first; the first entry is its making. */
                        history: {
                            /** @description The state before; null for the application being made. */
                            from: ("pending" | "approved" | "rejected" | "withdrawn" | "revoked") | null;
                            /**
                             * @description The state after.
                             * @enum {unknown}
                             */
                            to: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                            /**
                             * Format: date-time
                             * @description When (RFC 3339, UTC).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            at: string;
                            /** @description Who: a Discord ID (decimal digits), or `operator` for the command line. */
                            actor: string;
                            /** @description Why, when the actor said. */
                            reason: string | null;
                        }[];
                        /** @description Where the application's key stands; null before approval. */
                        key: {
                            /**
                             * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                             * @enum {unknown}
                             */
                            state: "uncollected" | "active" | "ended";
                            /**
                             * Format: date-time
                             * @description When the key was made (on approval, or by a rotation).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            made_at: string;
                            /** @description When its owner collected it; null until then. */
                            collected_at: string | null;
                            /** @description When it was last exchanged for a token; null if never. */
                            last_used_at: string | null;
                            /** @description When it ended; null while it has not. */
                            ended_at: string | null;
                            /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                            ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                        } | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    rejectApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        /** @description An optional reason for the change (the body may be left out). */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "reason": "Checked with the developer on Discord."
                 *     }
                 */
                "application/json": {
                    /** @description Why; kept in the history. */
                    reason?: string;
                };
            };
        };
        responses: {
            /** @description An application with its history and its key's state. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application's id.
                         * @example 0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b
                         */
                        id: string;
                        /** @description The application's name. */
                        name: string;
                        /** @description What the application is for. */
                        description: string;
                        /**
                         * Format: uint64
                         * @description The applicant (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                         */
                        owner: string;
                        /** @description The grants applied for. */
                        grants: string[];
                        /**
                         * Format: date-time
                         * @description When the application was made (RFC 3339, UTC).
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        applied_at: string;
                        /**
                         * @description pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.
                         * @enum {unknown}
                         */
                        currentState: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                        /** @description Every state the application has been in, oldest first; the first entry is its making. */
                        history: {
                            /** @description The state before; null for the application being made. */
                            from: ("pending" | "approved" | "rejected" | "withdrawn" | "revoked") | null;
                            /**
                             * @description The state after.
                             * @enum {unknown}
                             */
                            to: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                            /**
                             * Format: date-time
                             * @description When (RFC 3339, UTC).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            at: string;
                            /** @description Who: a Discord ID (decimal digits), or `operator` for the command line. */
                            actor: string;
                            /** @description Why, when the actor said. */
                            reason: string | null;
                        }[];
                        /** @description Where the application's key stands; null before approval. */
                        key: {
                            /**
                             * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                             * @enum {unknown}
                             */
                            state: "uncollected" | "active" | "ended";
                            /**
                             * Format: date-time
                             * @description When the key was made (on approval, or by a rotation).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            made_at: string;
                            /** @description When its owner collected it; null until then. */
                            collected_at: string | null;
                            /** @description When it was last exchanged for a token; null if never. */
                            last_used_at: string | null;
                            /** @description When it ended; null while it has not. */
                            ended_at: string | null;
                            /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                            ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                        } | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    revokeApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        /** @description An optional reason for the change (the body may be left out). */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "reason": "Checked with the developer on Discord."
                 *     }
                 */
                "application/json": {
                    /** @description Why; kept in the history. */
                    reason?: string;
                };
            };
        };
        responses: {
            /** @description An application with its history and its key's state. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application's id.
                         * @example 0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b
                         */
                        id: string;
                        /** @description The application's name. */
                        name: string;
                        /** @description What the application is for. */
                        description: string;
                        /**
                         * Format: uint64
                         * @description The applicant (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                         */
                        owner: string;
                        /** @description The grants applied for. */
                        grants: string[];
                        /**
                         * Format: date-time
                         * @description When the application was made (RFC 3339, UTC).
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        applied_at: string;
                        /**
                         * @description pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.
                         * @enum {unknown}
                         */
                        currentState: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                        /** @description Every state the application has been in, oldest first; the first entry is its making. */
                        history: {
                            /** @description The state before; null for the application being made. */
                            from: ("pending" | "approved" | "rejected" | "withdrawn" | "revoked") | null;
                            /**
                             * @description The state after.
                             * @enum {unknown}
                             */
                            to: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                            /**
                             * Format: date-time
                             * @description When (RFC 3339, UTC).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            at: string;
                            /** @description Who: a Discord ID (decimal digits), or `operator` for the command line. */
                            actor: string;
                            /** @description Why, when the actor said. */
                            reason: string | null;
                        }[];
                        /** @description Where the application's key stands; null before approval. */
                        key: {
                            /**
                             * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                             * @enum {unknown}
                             */
                            state: "uncollected" | "active" | "ended";
                            /**
                             * Format: date-time
                             * @description When the key was made (on approval, or by a rotation).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            made_at: string;
                            /** @description When its owner collected it; null until then. */
                            collected_at: string | null;
                            /** @description When it was last exchanged for a token; null if never. */
                            last_used_at: string | null;
                            /** @description When it ended; null while it has not. */
                            ended_at: string | null;
                            /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                            ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                        } | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    withdrawApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        /** @description An optional reason for the change (the body may be left out). */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "reason": "Checked with the developer on Discord."
                 *     }
                 */
                "application/json": {
                    /** @description Why; kept in the history. */
                    reason?: string;
                };
            };
        };
        responses: {
            /** @description An application with its history and its key's state. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application's id.
                         * @example 0b6f7c1e-2d1a-4b8e-9a52-1c2f3e4d5a6b
                         */
                        id: string;
                        /** @description The application's name. */
                        name: string;
                        /** @description What the application is for. */
                        description: string;
                        /**
                         * Format: uint64
                         * @description The applicant (a Discord ID), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                         */
                        owner: string;
                        /** @description The grants applied for. */
                        grants: string[];
                        /**
                         * Format: date-time
                         * @description When the application was made (RFC 3339, UTC).
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        applied_at: string;
                        /**
                         * @description pending (initial), approved, rejected, withdrawn or revoked; rejected, withdrawn and revoked are final.
                         * @enum {unknown}
                         */
                        currentState: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                        /** @description Every state the application has been in, oldest first; the first entry is its making. */
                        history: {
                            /** @description The state before; null for the application being made. */
                            from: ("pending" | "approved" | "rejected" | "withdrawn" | "revoked") | null;
                            /**
                             * @description The state after.
                             * @enum {unknown}
                             */
                            to: "pending" | "approved" | "rejected" | "withdrawn" | "revoked";
                            /**
                             * Format: date-time
                             * @description When (RFC 3339, UTC).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            at: string;
                            /** @description Who: a Discord ID (decimal digits), or `operator` for the command line. */
                            actor: string;
                            /** @description Why, when the actor said. */
                            reason: string | null;
                        }[];
                        /** @description Where the application's key stands; null before approval. */
                        key: {
                            /**
                             * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                             * @enum {unknown}
                             */
                            state: "uncollected" | "active" | "ended";
                            /**
                             * Format: date-time
                             * @description When the key was made (on approval, or by a rotation).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            made_at: string;
                            /** @description When its owner collected it; null until then. */
                            collected_at: string | null;
                            /** @description When it was last exchanged for a token; null if never. */
                            last_used_at: string | null;
                            /** @description When it ended; null while it has not. */
                            ended_at: string | null;
                            /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                            ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                        } | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    collectApplicationKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key, shown this once: keep it secret. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application key: shown this once and stored by the service only as a hash. Keep it secret; exchange it for tokens at POST /auth/token as often as needed.
                         * @example pds_q3Zk7yD0Yw9hW8b2vJ4mX1nR5tA6sC7eF8gH9iJ0kLm
                         */
                        key: string;
                        /** @description Where an application's key stands (never the key itself). */
                        status: {
                            /**
                             * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                             * @enum {unknown}
                             */
                            state: "uncollected" | "active" | "ended";
                            /**
                             * Format: date-time
                             * @description When the key was made (on approval, or by a rotation).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            made_at: string;
                            /** @description When its owner collected it; null until then. */
                            collected_at: string | null;
                            /** @description When it was last exchanged for a token; null if never. */
                            last_used_at: string | null;
                            /** @description When it ended; null while it has not. */
                            ended_at: string | null;
                            /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                            ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                        };
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    rotateApplicationKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key, shown this once: keep it secret. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description The application key: shown this once and stored by the service only as a hash. Keep it secret; exchange it for tokens at POST /auth/token as often as needed.
                         * @example pds_q3Zk7yD0Yw9hW8b2vJ4mX1nR5tA6sC7eF8gH9iJ0kLm
                         */
                        key: string;
                        /** @description Where an application's key stands (never the key itself). */
                        status: {
                            /**
                             * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                             * @enum {unknown}
                             */
                            state: "uncollected" | "active" | "ended";
                            /**
                             * Format: date-time
                             * @description When the key was made (on approval, or by a rotation).
                             * @example 2026-11-22T03:05:17.123Z
                             */
                            made_at: string;
                            /** @description When its owner collected it; null until then. */
                            collected_at: string | null;
                            /** @description When it was last exchanged for a token; null if never. */
                            last_used_at: string | null;
                            /** @description When it ended; null while it has not. */
                            ended_at: string | null;
                            /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                            ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                        };
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    revokeApplicationKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The application's id. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Where an application's key stands (never the key itself). */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description uncollected: approved, waiting for its owner to collect it (POST .../key); active: collected, exchangeable at POST /auth/token; ended: rotated, revoked, or its application revoked.
                         * @enum {unknown}
                         */
                        state: "uncollected" | "active" | "ended";
                        /**
                         * Format: date-time
                         * @description When the key was made (on approval, or by a rotation).
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        made_at: string;
                        /** @description When its owner collected it; null until then. */
                        collected_at: string | null;
                        /** @description When it was last exchanged for a token; null if never. */
                        last_used_at: string | null;
                        /** @description When it ended; null while it has not. */
                        ended_at: string | null;
                        /** @description Why it ended: rotated, revoked (by its owner), application_revoked; null while it has not. */
                        ended_reason: ("rotated" | "revoked" | "application_revoked") | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    exchangeKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description An application key to exchange for a token. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "key": "pds_2Qm9vX3Ab7uWc4Yf0LpZr8TnKs1Hd6Ge5Jx3Vb9Nq0I"
                 *     }
                 */
                "application/json": {
                    /** @description An approved application's key. */
                    key: string;
                };
            };
        };
        responses: {
            /** @description A new token. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description A JWT access token: send it as `Authorization: Bearer <token>`. */
                        token: string;
                        /**
                         * Format: date-time
                         * @description When the token expires (RFC 3339, UTC).
                         */
                        expires_at: string;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    listInteractionLogs: {
        parameters: {
            query?: {
                /** @description Only this owner's logs. Without the messenger:audit grant you read your own only, and `owner`, if given, must be you; with it, every owner's unless `owner` names one. */
                owner?: "0" | (string);
                /** @description Only this user's interactions. 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer. */
                user_id?: string;
                /** @description Only this server's interactions. 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer. */
                server_id?: string;
                /** @description Only logs received at or after this time (RFC 3339). */
                since?: string;
                /** @description Page size (1 to 100); 20 unless given. */
                limit?: number;
                /** @description The `next_cursor` of the page before. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of interaction logs. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Newest first. */
                        data: {
                            /** @description The log's id. */
                            id: string;
                            /**
                             * Format: date-time
                             * @description When the service received it (RFC 3339, UTC).
                             */
                            received_at: string;
                            /**
                             * Format: uint64
                             * @description The owner of the token that logged it. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                             */
                            owner: string;
                            /** @description The interaction, without its token. */
                            interaction: {
                                interaction_name: string;
                                interaction_type: string;
                                options?: {
                                    [key: string]: unknown;
                                };
                                /**
                                 * Format: uint64
                                 * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                                 */
                                server_id?: string;
                                /**
                                 * Format: uint64
                                 * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                                 */
                                user_id: string;
                            };
                            server?: {
                                /**
                                 * Format: uint64
                                 * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                                 */
                                server_id: string;
                                server_name?: string;
                            };
                            user: {
                                /**
                                 * Format: uint64
                                 * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                                 */
                                user_id: string;
                                username: string;
                            };
                        }[];
                        /** @description Pass as `cursor` for the next page; null on the last page. */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    logInteraction: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description InteractionLog: one interaction of a user with the bot. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "interaction": {
                 *         "interaction_name": "stats",
                 *         "interaction_token": "aW50ZXJhY3Rpb246OTg3NjU0MzIxMDk4NzY1NDMy",
                 *         "interaction_type": "APPLICATION_COMMAND",
                 *         "options": {
                 *           "player": "Minikloon",
                 *           "mode": "bedwars"
                 *         },
                 *         "server_id": "123456789012345678",
                 *         "user_id": "987654321098765432"
                 *       },
                 *       "server": {
                 *         "server_id": "123456789012345678",
                 *         "server_name": "Bed Wars Club"
                 *       },
                 *       "user": {
                 *         "user_id": "987654321098765432",
                 *         "username": "minikloon_fan"
                 *       }
                 *     }
                 */
                "application/json": {
                    interaction: {
                        /**
                         * @description The command used.
                         * @example stats
                         */
                        interaction_name: string;
                        /** @description The interaction's token: a secret. It is never stored or logged; only a keyed fingerprint is kept, to spot the same interaction logged twice. */
                        interaction_token: string;
                        /**
                         * @description The kind of interaction.
                         * @example APPLICATION_COMMAND
                         */
                        interaction_type: string;
                        /** @description The command's options as the bot received them: a free-form object. At most 4096 bytes as JSON, nested at most 8 deep. */
                        options?: {
                            [key: string]: unknown;
                        };
                        /**
                         * @description The server it happened in (absent in direct messages). 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer.
                         * @example 987654321098765432
                         */
                        server_id?: string;
                        /**
                         * @description The user who interacted. 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer.
                         * @example 987654321098765432
                         */
                        user_id: string;
                    };
                    server?: {
                        /**
                         * @description The server's ID: interaction.server_id when both are given. 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer.
                         * @example 987654321098765432
                         */
                        server_id: string;
                        /** @description The server's name. */
                        server_name?: string;
                    };
                    user: {
                        /**
                         * @description The user's ID: interaction.user_id. 1 to 18446744073709551615, as a decimal string (exact in any client) or a JSON integer.
                         * @example 987654321098765432
                         */
                        user_id: string;
                        /** @description The user's Discord username. */
                        username: string;
                    };
                };
            };
        };
        responses: {
            /** @description InteractionLog: the log as received; for an interaction logged before, its first record. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        interaction: {
                            interaction_name: string;
                            interaction_type: string;
                            options?: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: uint64
                             * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                             */
                            server_id?: string;
                            /**
                             * Format: uint64
                             * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                             */
                            user_id: string;
                            /** @description As sent. */
                            interaction_token: string;
                        };
                        server?: {
                            /**
                             * Format: uint64
                             * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                             */
                            server_id: string;
                            server_name?: string;
                        };
                        user: {
                            /**
                             * Format: uint64
                             * @description A 64-bit Discord ID (snowflake), exact. A JSON integer from 1 to 18446744073709551615 (unsigned 64-bit): parse it exactly (see the document's description).
                             */
                            user_id: string;
                            username: string;
                        };
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Not acknowledged: the write queue is full (`WRITE_QUEUE_FULL`, Retry-After: 1), the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1). Nothing is stored, except when the database stopped answering during the commit itself, which it may have finished: sending the log again is always safe (a log stored already is not stored twice). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getPlayer: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A Minecraft UUID (dashed or not, any case) or a username. */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The player, from the cache while fresh, from the upstream, or a stale copy standing in. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Where the answer came from: HIT (a fresh copy from the cache), MISS (fetched now from the upstream) or STALE (an older copy standing in while the upstream fails). */
                    "X-Cache": "HIT" | "MISS" | "STALE";
                    /** @description Seconds since the copy was fetched from the upstream. */
                    Age: number;
                    /** @description `private, max-age=<seconds the copy stays fresh>` (0 for a stale copy): a client may keep it that long. */
                    "Cache-Control": string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: true;
                        /** @enum {boolean} */
                        throttle: false;
                        player: components["schemas"]["HypixelPlayer"];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No such player: no Minecraft player has this username, or this player has never joined Hypixel. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Where the answer came from: HIT (a fresh copy from the cache), MISS (fetched now from the upstream) or STALE (an older copy standing in while the upstream fails). */
                    "X-Cache": "HIT" | "MISS" | "STALE";
                    /** @description Seconds since the copy was fetched from the upstream. */
                    Age: number;
                    /** @description `private, max-age=<seconds the copy stays fresh>` (0 for a stale copy): a client may keep it that long. */
                    "Cache-Control": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        player: null;
                    };
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description In the result shape: the upstream, its rate budget or the caller's share of it is throttling lookups (`throttle: true`). As an ErrorResponse: the owner's budget of the service's work is used up. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    /** @description Seconds until a lookup may be tried again. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        player: null;
                    } | components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The upstream answered with an error, or in an unexpected shape. */
            502: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        player: null;
                    };
                };
            };
            /** @description In the result shape: the upstream cannot be reached (or its circuit breaker is open). As an ErrorResponse: the database is unavailable, or the instance is shutting down. */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        player: null;
                    } | components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The upstream did not answer in time. */
            504: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        player: null;
                    };
                };
            };
        };
    };
    getPlayers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "players": [
                 *         "Minikloon",
                 *         "20934ef9-488c-4651-80a7-8f861586b4cf",
                 *         "ef962ec2df6e48a2ac9d6062c1b84652"
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description 1 to 100 players, each a UUID or a username; a string given twice is one result. Any invalid one refuses the whole request (400 naming each, up to 20). */
                    players: string[];
                };
            };
        };
        responses: {
            /** @description Each player as `GET /player/{player}` would answer it. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description A bulk answer is never kept by a cache (its items differ in freshness): `no-store`. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description One entry per distinct string given, keyed by it as given, in the order first given: two spellings of one player (a dashed and an undashed UUID, a username and its UUID) are two entries with the same player, fetched once. */
                        results: {
                            [key: string]: {
                                /** @enum {boolean} */
                                success: true;
                                /** @enum {boolean} */
                                throttle: false;
                                player: components["schemas"]["HypixelPlayer"];
                            } | {
                                /** @enum {boolean} */
                                success: false;
                                /** @description Why it failed, safe to show an end user. */
                                cause: string;
                                /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                                throttle: boolean;
                                player: null;
                            };
                        };
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getPlayerHistory: {
        parameters: {
            query: {
                fields: string | string[];
                /** @description Only snapshots taken at or after this (default: the first kept). An RFC 3339 time, or a UTC day (YYYY-MM-DD). */
                from?: string;
                /** @description Only snapshots taken at or before this (default: now). An RFC 3339 time, or a UTC day (YYYY-MM-DD). */
                to?: string;
                /** @description At most this many points (default 100): when more snapshots are in the range, evenly spread ones, the first and the last among them. */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description A Minecraft UUID (dashed or not, any case) or a username. */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The player's history: the values asked for, at each snapshot. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description The player's UUID, undashed lowercase. */
                        uuid: string;
                        /** @description One point per stored snapshot in the range, oldest first (evenly thinned to `limit`). */
                        points: {
                            /**
                             * Format: date-time
                             * @description When the snapshot was fetched (RFC 3339).
                             */
                            at: string;
                            /** @description Each pointer asked for, as given, and its value in the snapshot (any JSON value, numbers exact), or null when the player had none. */
                            values: {
                                [key: string]: unknown;
                            };
                        }[];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            502: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            504: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getPlayerSessions: {
        parameters: {
            query?: {
                /** @description Only snapshots taken at or after this (default: the first kept). An RFC 3339 time, or a UTC day (YYYY-MM-DD). */
                from?: string;
                /** @description Only snapshots taken at or before this (default: now). An RFC 3339 time, or a UTC day (YYYY-MM-DD). */
                to?: string;
                /** @description At most this many sessions, the newest (default 20). */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description A Minecraft UUID (dashed or not, any case) or a username. */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The player's play sessions, from their snapshots. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description The player's UUID, undashed lowercase. */
                        uuid: string;
                        /** @description Newest first. */
                        sessions: {
                            /**
                             * Format: date-time
                             * @description When the player logged in (their `lastLogin`).
                             */
                            start: string;
                            /** @description When they logged out, or null: still online, or no logout seen yet. */
                            end: string | null;
                            /** @description Each numeric value that changed over the session, by JSON Pointer, and by how much (a new one counts from 0). */
                            changes: {
                                [key: string]: number;
                            };
                        }[];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            502: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            504: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getGamemodeProfiles: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A Minecraft UUID (dashed or not, any case) or a username. */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The profiles, from the cache while fresh, from the upstream, or a stale copy standing in. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Where the answer came from: HIT (a fresh copy from the cache), MISS (fetched now from the upstream) or STALE (an older copy standing in while the upstream fails). */
                    "X-Cache": "HIT" | "MISS" | "STALE";
                    /** @description Seconds since the copy was fetched from the upstream. */
                    Age: number;
                    /** @description `private, max-age=<seconds the copy stays fresh>` (0 for a stale copy): a client may keep it that long. */
                    "Cache-Control": string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: true;
                        /** @description The player's SkyBlock profiles as the upstream sent them ([] for none). */
                        profiles: components["schemas"]["SkyBlockProfile"][];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No such player: no Minecraft player has this username. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Where the answer came from: HIT (a fresh copy from the cache), MISS (fetched now from the upstream) or STALE (an older copy standing in while the upstream fails). */
                    "X-Cache": "HIT" | "MISS" | "STALE";
                    /** @description Seconds since the copy was fetched from the upstream. */
                    Age: number;
                    /** @description `private, max-age=<seconds the copy stays fresh>` (0 for a stale copy): a client may keep it that long. */
                    "Cache-Control": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        profiles: null;
                    };
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description In the result shape: the upstream, its rate budget or the caller's share of it is throttling lookups (`throttle: true`). As an ErrorResponse: the owner's budget of the service's work is used up. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    /** @description Seconds until a lookup may be tried again. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        profiles: null;
                    } | components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The upstream answered with an error, or in an unexpected shape. */
            502: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        profiles: null;
                    };
                };
            };
            /** @description In the result shape: the upstream cannot be reached (or its circuit breaker is open). As an ErrorResponse: the database is unavailable, or the instance is shutting down. */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        profiles: null;
                    } | components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The upstream did not answer in time. */
            504: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {boolean} */
                        success: false;
                        /** @description Why it failed, safe to show an end user. */
                        cause: string;
                        /** @description True when the upstream (or its rate budget, or the caller's share of it) is throttling requests: retry after Retry-After. */
                        throttle: boolean;
                        profiles: null;
                    };
                };
            };
        };
    };
    getMessengerUserProfile: {
        parameters: {
            query?: {
                /** @description Read this owner's view of the user (default: your own). Only with the messenger:audit grant may it name another owner than you. */
                owner?: "0" | (string);
            };
            header?: never;
            path: {
                /** @description A Discord ID (snowflake): 17 to 20 decimal digits. */
                snowflake: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description UserProfileResult: a Discord user and their Minecraft accounts. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user_profile: {
                            /**
                             * @description The user's Discord ID, as the exact digits.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /**
                             * @description BCP 47 language tag; en-US unless set.
                             * @example en-US
                             */
                            locale: string;
                        };
                        /** @description The primary first, then in link order. */
                        linked_accounts: {
                            /**
                             * @description The Minecraft UUID, undashed lowercase.
                             * @example 20934ef9488c465180a78f861586b4cf
                             */
                            id: string;
                            /**
                             * @description The Discord ID of the user it is linked to.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /** @description Whether it is the user's primary account (exactly one is). */
                            is_primary: boolean;
                        }[];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    setMessengerUserLocale: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A Discord ID (snowflake): 17 to 20 decimal digits. */
                snowflake: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "locale": "pt-BR"
                 *     }
                 */
                "application/json": {
                    /**
                     * @description A BCP 47 language tag (a language, then a script, region, variants, extensions, private use; not `und`); kept in canonical form (en-us becomes en-US).
                     * @example pt-BR
                     */
                    locale: string;
                };
            };
        };
        responses: {
            /** @description UserProfileResult: a Discord user and their Minecraft accounts. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user_profile: {
                            /**
                             * @description The user's Discord ID, as the exact digits.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /**
                             * @description BCP 47 language tag; en-US unless set.
                             * @example en-US
                             */
                            locale: string;
                        };
                        /** @description The primary first, then in link order. */
                        linked_accounts: {
                            /**
                             * @description The Minecraft UUID, undashed lowercase.
                             * @example 20934ef9488c465180a78f861586b4cf
                             */
                            id: string;
                            /**
                             * @description The Discord ID of the user it is linked to.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /** @description Whether it is the user's primary account (exactly one is). */
                            is_primary: boolean;
                        }[];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    linkMinecraftAccount: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A Discord ID (snowflake): 17 to 20 decimal digits. */
                snowflake: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "player": "Minikloon",
                 *       "primary": true
                 *     }
                 */
                "application/json": {
                    /**
                     * @description The Minecraft account: a UUID (dashed or not) or a username.
                     * @example Notch
                     */
                    player: string;
                    /** @description Make it the primary account (the first account linked always is). */
                    primary?: boolean;
                    /** @description Link only when the player's Hypixel profile (socialMedia.links.DISCORD) names the user's Discord username, case-insensitively. */
                    verify?: boolean;
                    /** @description The user's Discord username, for verification, used only when no interaction log has named the user. */
                    username?: string;
                };
            };
        };
        responses: {
            /** @description UserProfileResult: a Discord user and their Minecraft accounts. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user_profile: {
                            /**
                             * @description The user's Discord ID, as the exact digits.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /**
                             * @description BCP 47 language tag; en-US unless set.
                             * @example en-US
                             */
                            locale: string;
                        };
                        /** @description The primary first, then in link order. */
                        linked_accounts: {
                            /**
                             * @description The Minecraft UUID, undashed lowercase.
                             * @example 20934ef9488c465180a78f861586b4cf
                             */
                            id: string;
                            /**
                             * @description The Discord ID of the user it is linked to.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /** @description Whether it is the user's primary account (exactly one is). */
                            is_primary: boolean;
                        }[];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request conflicts with the state of the resource. */
            409: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            502: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            504: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    unlinkMinecraftAccount: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A Discord ID (snowflake): 17 to 20 decimal digits. */
                snowflake: string;
                /** @description A linked Minecraft UUID, dashed or not, any case. */
                uuid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description UserProfileResult: a Discord user and their Minecraft accounts. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user_profile: {
                            /**
                             * @description The user's Discord ID, as the exact digits.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /**
                             * @description BCP 47 language tag; en-US unless set.
                             * @example en-US
                             */
                            locale: string;
                        };
                        /** @description The primary first, then in link order. */
                        linked_accounts: {
                            /**
                             * @description The Minecraft UUID, undashed lowercase.
                             * @example 20934ef9488c465180a78f861586b4cf
                             */
                            id: string;
                            /**
                             * @description The Discord ID of the user it is linked to.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /** @description Whether it is the user's primary account (exactly one is). */
                            is_primary: boolean;
                        }[];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    setPrimaryMinecraftAccount: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A Discord ID (snowflake): 17 to 20 decimal digits. */
                snowflake: string;
                /** @description A linked Minecraft UUID, dashed or not, any case. */
                uuid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description UserProfileResult: a Discord user and their Minecraft accounts. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user_profile: {
                            /**
                             * @description The user's Discord ID, as the exact digits.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /**
                             * @description BCP 47 language tag; en-US unless set.
                             * @example en-US
                             */
                            locale: string;
                        };
                        /** @description The primary first, then in link order. */
                        linked_accounts: {
                            /**
                             * @description The Minecraft UUID, undashed lowercase.
                             * @example 20934ef9488c465180a78f861586b4cf
                             */
                            id: string;
                            /**
                             * @description The Discord ID of the user it is linked to.
                             * @example 123456789012345678
                             */
                            snowflake: string;
                            /** @description Whether it is the user's primary account (exactly one is). */
                            is_primary: boolean;
                        }[];
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    getPingHistory: {
        parameters: {
            query?: {
                /** @description Only this day and later (UTC). */
                from?: string;
                /** @description Only this day and earlier (UTC). */
                to?: string;
                /** @description At most this many days (the newest). */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description A Minecraft UUID (dashed or not, any case) or a username. */
                player: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description PingHistory: daily statistics and history. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Names this version of the answer (with `-br` or `-gzip` for a compressed copy): sent back in `If-None-Match`, it gets a 304 while the answer is unchanged. */
                    ETag: string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description One record per UTC day with samples, newest first. */
                        data: {
                            /** @description The mean of all the day's samples, in ms, rounded to 2 decimals. */
                            avg: number;
                            /** @description The day's shortest ping, in ms. */
                            min: number;
                            /** @description The day's longest ping, in ms. */
                            max: number;
                            /**
                             * Format: date
                             * @description The UTC day, YYYY-MM-DD.
                             */
                            date: string;
                            /** @description The day's ping values in time order (its latest ones, up to PING_HISTORY_PER_DAY). */
                            history: number[];
                            /** @description The lobby of the day's last sample. */
                            last_lobby: string;
                            /**
                             * Format: date-time
                             * @description When the day's last sample was taken (RFC 3339).
                             */
                            last_ping: string;
                        }[];
                    };
                };
            };
            /** @description The client already has this version (`If-None-Match` named its `ETag`): no body. */
            304: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Names this version of the answer (with `-br` or `-gzip` for a compressed copy): sent back in `If-None-Match`, it gets a 304 while the answer is unchanged. */
                    ETag: string;
                    /** @description Accept-Encoding: the answer is compressed when the request accepts it. */
                    Vary: string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            502: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The service cannot serve now: the database is unavailable (Retry-After: 2) or the instance is shutting down (Retry-After: 1; the request will reach another). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            504: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
    ingestPingSamples: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A Minecraft UUID (dashed or not, any case) or a username. */
                player: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "samples": [
                 *         {
                 *           "ping": 42,
                 *           "lobby": "bedwars_lobby_3"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description 1 to 1000 samples, stored together or not at all; one equal to a stored sample is stored once. */
                    samples: {
                        /**
                         * @description The round trip, in whole milliseconds.
                         * @example 42
                         */
                        ping: number;
                        /**
                         * @description The lobby the player was in.
                         * @example bedwars_lobby_3
                         */
                        lobby: string;
                        /**
                         * Format: date-time
                         * @description When it was measured (RFC 3339): now when left out; at most PING_MAX_FUTURE_SECONDS (60 by default) after the request is received, and within the retention.
                         * @example 2026-11-22T03:05:17.123Z
                         */
                        at?: string;
                    }[];
                };
            };
        };
        responses: {
            /** @description The new samples are committed. */
            200: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description The player's UUID, undashed lowercase. */
                        player: string;
                        /** @description How many samples were stored now: those not stored before. */
                        stored: number;
                        /** @description How many samples were not stored again: equal to a sample already stored (by anyone), or to an earlier one of the batch. stored + duplicates is the number of samples sent. */
                        duplicates: number;
                    };
                };
            };
            /** @description The request is not valid: each `extra` entry names one faulty field or problem. */
            400: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description No access token, or one that is not valid (expired, revoked, not this endpoint's). */
            401: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge: `Bearer realm="player-data-service"`, with `error` when a token was sent. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The access token is valid but does not grant this. */
            403: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The RFC 6750 challenge, `error="insufficient_scope"` with the `scope` needed. */
                    "WWW-Authenticate": string;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description There is no such resource. */
            404: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is larger than the limit. */
            413: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description A segment of the path is longer than any value the endpoint takes there (over 100 characters). */
            414: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description The request body is not `application/json`. */
            415: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description `identity`, when the body came in a content coding (`Content-Encoding`): bodies are taken uncompressed (RFC 9110, 12.5.3). */
                    "Accept-Encoding"?: "identity";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Too many requests: the owner's budget of the service's work is used up (RateLimit policy "work"), or this client address sent too many requests to an endpoint that issues tokens ("address"): retry after Retry-After. */
            429: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds until the request may be sent again. */
                    "Retry-After": number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An unexpected error; it is logged, and the answer reveals nothing of it. */
            500: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            502: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description Not acknowledged: the write queue is full (`WRITE_QUEUE_FULL`, Retry-After: 1), the database or Mojang is unavailable, or the instance is shutting down. Nothing is stored, except when the database stopped answering during the commit itself, which it may have finished: sending the batch again is always safe (a sample stored already counts as a duplicate). */
            503: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description Seconds to wait before trying again, when known. */
                    "Retry-After"?: number;
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
            /** @description An error. */
            504: {
                headers: {
                    "API-Version": components["headers"]["API-Version"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description Accept-Encoding, on an answer compressed (`Content-Encoding`). */
                    Vary?: string;
                    /** @description `br` or `gzip` when the request accepts it (`Accept-Encoding`) and the body is 1 KiB or more; absent otherwise. */
                    "Content-Encoding"?: "br" | "gzip";
                    /** @description Errors and failures are never kept by a cache. */
                    "Cache-Control": "no-store";
                    /** @description The limits this answer counted against (IETF draft-ietf-httpapi-ratelimit-headers), one item each: `"work";q=<units>;w=<seconds>` the owner's budget of the service's work, `"upstream";q=<lookups>;w=<seconds>` the owner's share of the upstream key (player and profile lookups, once the key's limit is known), `"address";q=<requests>;w=<seconds>` the client address's limit on routes that issue tokens. */
                    "RateLimit-Policy"?: string;
                    /** @description Where the caller stands in each policy of RateLimit-Policy, in the same order: `r` units left, `t` seconds until the quota is whole again. */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponse"];
                };
            };
        };
    };
}

/** The properties the document declares `format: uint64`: the client reads their values as exact decimal text. */
export const uint64Properties: readonly string[] = ["owner","server_id","user_id"];
