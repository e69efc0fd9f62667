import { isInteger, isSafeNumber, parse, stringify } from 'lossless-json';
import { AppError, ErrorKinds } from './errors.js';

/**
 * JSON numbers as JavaScript can hold them exactly: safe numbers become `number`; an integer too large for
 * a double keeps its digits as a string, for schemas (snowflakes) that take it exactly.
 * Anything else (a non-integer beyond double precision) becomes the nearest double, as JSON.parse does.
 */
function parseNumber(text: string): number | string {
  if (isSafeNumber(text)) return Number(text);
  return isInteger(text) ? text : Number(text);
}

/** Any integer literal long enough that a double might not hold it exactly. */
const LONG_INTEGER = /\d{16,}/;

/**
 * Parses JSON text (a trusted one: no duplicate-key check) exactly: with JSON.parse when it holds no
 * integer literal long enough to lose digits, otherwise integers beyond 2^53 keep their digits as strings.
 */
export function parseJsonExact(text: string): unknown {
  return LONG_INTEGER.test(text) ? parse(text, null, parseNumber) : JSON.parse(text);
}

/**
 * JSON text kept inside a fixed envelope, `<prefix><json>}` (a result body such as
 * `{"success":true,"player":<json>}`): wrapped once, and the inner JSON read back as a view, without a copy.
 */
export function jsonEnvelope(prefix: string) {
  const prefixBytes = Buffer.byteLength(prefix);
  return {
    wrap: (json: string): Buffer => Buffer.from(`${prefix}${json}}`),
    inner: (body: Buffer): Buffer => body.subarray(prefixBytes, body.length - 1),
  };
}

/**
 * Parses a JSON request body without losing 64-bit integers. An empty body is "no body" (GETs that send
 * `Content-Type: application/json` with nothing); duplicate keys and `__proto__` keys are refused.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = parse(text, null, parseNumber);
  } catch (error) {
    throw AppError.of(ErrorKinds.MALFORMED_JSON, {
      cause: 'Malformed JSON',
      developerReason: `body is not valid JSON: ${(error as Error).message}`,
    });
  }
  if (hasProtoKey(value)) {
    throw AppError.of(ErrorKinds.MALFORMED_JSON, {
      cause: 'Malformed JSON',
      developerReason: 'body must not contain a "__proto__" key',
    });
  }
  return value;
}

/** `__proto__` as a key is harmless until some code copies the object with Object.assign or a spread. */
function hasProtoKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasProtoKey);
  if (value === null || typeof value !== 'object') return false;
  if (Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some(hasProtoKey);
}

/**
 * The serializer for replies that have no schema for their status (schemas serialize everything else):
 * it writes bigints as integer digits instead of throwing as JSON.stringify does.
 */
export function serializeJson(payload: unknown): string {
  return stringify(payload) ?? 'null';
}
