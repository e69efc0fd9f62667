export {
  type Answer,
  type Client,
  type ClientOptions,
  createClient,
  type HistoryQuery,
  type PlayerAnswer,
  type ProfilesAnswer,
  parseRateLimit,
  type Query,
  type RateLimitState,
  type RequestBody,
  retryAfterSeconds,
} from './client.js';
export { ApiError, type ErrorResponse, type LookupFailure } from './errors.js';
export type * from './hypixel.js';
export { parseJson } from './json.js';
export type { components, operations, paths } from './schema.js';
