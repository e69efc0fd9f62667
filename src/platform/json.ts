import { isInteger, isSafeNumber, parse, stringify } from 'lossless-json';
import { AppError, ErrorKinds } from './errors.js';

/**
 * An integer literal too large for a double (beyond 2^53), its digits kept exactly. Neither a number nor a
 * string, so no schema field typed so takes it: only a snowflake (`Snowflake()`) does, as a bigint. Written
 * back (JSON.stringify, `serializeJson`) as a string of its digits: free-form JSON (a bot's command options)
 * keeps them that way.
 */
export class LongInteger {
  constructor(readonly digits: string) {}
  toJSON(): string {
    return this.digits;
  }
  toString(): string {
    return this.digits;
  }
}

/**
 * JSON numbers as JavaScript can hold them exactly: safe numbers become `number`; an integer too large for
 * a double a `LongInteger`. Anything else (a non-integer beyond double precision) becomes the nearest
 * double, as JSON.parse does.
 */
function parseNumber(text: string): number | LongInteger {
  if (isSafeNumber(text)) return Number(text);
  return isInteger(text) ? new LongInteger(text) : Number(text);
}

/** Any integer literal long enough that a double might not hold it exactly. */
const LONG_INTEGER = /\d{16,}/;

/**
 * Parses JSON text (a trusted one: no duplicate-key check) exactly: with JSON.parse when it holds no
 * integer literal long enough to lose digits, otherwise integers beyond 2^53 come as `LongInteger`s.
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

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, found in one pass without recursion
 * (brackets inside strings do not count). The parser and every walk over the parsed value recurse, so a
 * body is measured before anything else touches it.
 */
function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === BACKSLASH) index++;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) inString = true;
    else if (char === OPEN_BRACKET || char === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (char === CLOSE_BRACKET || char === CLOSE_BRACE) depth--;
  }
  return false;
}

/** A number in a request body that no double holds (`1e400`): refused rather than kept as Infinity. */
class NumberOutOfRange extends Error {}

function parseBodyNumber(text: string): number | LongInteger {
  const value = parseNumber(text);
  if (typeof value === 'number' && !Number.isFinite(value)) throw new NumberOutOfRange();
  return value;
}

/**
 * Why a body is not JSON, by position only: the parser's own message quotes the text it stopped at, which
 * may be a piece of a secret (an interaction token with a bad escape).
 */
function malformedReason(error: unknown): string {
  if (error instanceof NumberOutOfRange) return 'body holds a number too large for a JSON number here';
  const message = (error as Error).message;
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position === undefined) return 'body is not valid JSON';
  return message.startsWith('Duplicate key')
    ? `body is not valid JSON: an object repeats a key (at character ${position})`
    : `body is not valid JSON: it breaks off or goes wrong at character ${position}`;
}

/**
 * Parses a JSON request body without losing 64-bit integers. An empty body is "no body" (GETs that send
 * `Content-Type: application/json` with nothing); nesting deeper than `maxDepth`, duplicate keys,
 * `__proto__` keys and numbers beyond a double's range are refused. A refusal never quotes the body.
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') return undefined;
  if (nestsDeeperThan(text, maxDepth)) {
    throw AppError.of(ErrorKinds.BODY_TOO_DEEP, {
      developerReason: `body arrays and objects are nested more than ${maxDepth} levels deep`,
    });
  }
  let value: unknown;
  try {
    value = parse(text, null, parseBodyNumber);
  } catch (error) {
    throw AppError.of(ErrorKinds.MALFORMED_JSON, {
      cause: 'Malformed JSON',
      developerReason: malformedReason(error),
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
function hasProtoKey(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (value === null || typeof value !== 'object') continue;
    if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) return true;
    for (const inner of Object.values(value)) pending.push(inner);
  }
  return false;
}

/**
 * JSON text of a value parsed by `parseJsonExact`, exactly: a `LongInteger` is written as the number it was
 * (its digits), not as a string. For documents kept and served as the upstream sent them.
 */
export function stringifyExact(value: unknown): string {
  return (
    stringify(value, undefined, undefined, [
      { test: (item) => item instanceof LongInteger, stringify: (item) => (item as LongInteger).digits },
    ]) ?? 'null'
  );
}

/**
 * The serializer for replies that have no schema for their status (schemas serialize everything else):
 * it writes bigints as integer digits instead of throwing as JSON.stringify does.
 */
export function serializeJson(payload: unknown): string {
  return stringify(payload) ?? 'null';
}
