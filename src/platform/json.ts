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

/** Any run of digits long enough that a double might not hold it exactly. */
const LONG_DIGITS = /\d{16,}/g;
/** What stands for a long integer in the text given to JSON.parse: a string no JSON text here holds. */
const MARK = '\u0000';

/**
 * Where the integer literals beyond 2^53 are in JSON text, as [start, end) spans, outside strings: digit
 * runs of 16 or more, read past string state kept from one run to the next (a quote opens or closes a
 * string unless escaped), that are whole integers (no fraction or exponent around them) and unsafe.
 */
function longIntegerSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  let inString = false;
  let scanned = 0;
  LONG_DIGITS.lastIndex = 0;
  for (let run = LONG_DIGITS.exec(text); run; run = LONG_DIGITS.exec(text)) {
    for (; scanned < run.index; scanned++) {
      const code = text.charCodeAt(scanned);
      if (code === QUOTE) inString = !inString;
      else if (code === BACKSLASH && inString) scanned++;
    }
    if (inString || scanned > run.index) continue;
    let start = run.index;
    const end = start + run[0].length;
    const before = text[start - 1];
    if (before === '-') start -= 1;
    const beforeSign = text[start - 1];
    if (
      before === '.' ||
      before === '+' ||
      beforeSign === 'e' ||
      beforeSign === 'E' ||
      /[.eE]/.test(text[end] ?? '')
    ) {
      continue;
    }
    const literal = text.slice(start, end);
    if (!isSafeNumber(literal)) spans.push([start, end]);
  }
  return spans;
}

/** The parsed value with each marked string (a long integer's digits) made a `LongInteger`, in place. */
function restoreLongIntegers(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith(MARK) ? new LongInteger(value.slice(1)) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) value[index] = restoreLongIntegers(value[index]);
    return value;
  }
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    const inner = object[key];
    if (typeof inner !== 'object' && !(typeof inner === 'string' && inner.startsWith(MARK))) continue;
    // Defined, not assigned: a member named `__proto__` is a member like any other.
    Object.defineProperty(object, key, { value: restoreLongIntegers(inner) });
  }
  return object;
}

/**
 * Parses JSON text (a trusted one: no duplicate-key check) exactly: integers beyond 2^53 come as
 * `LongInteger`s, everything else as JSON.parse gives it. Fast: the long integers are found in the text
 * and written as marked strings, the text is given to JSON.parse, and the marks are turned back (a player
 * with a few long integers parses in a fifth of the time a full exact parser takes). Text that could hold
 * the mark already (any `\u0000` escape) takes the exact parser.
 */
export function parseJsonExact(text: string): unknown {
  LONG_DIGITS.lastIndex = 0;
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  if (text.includes('\\u0000')) return parse(text, null, parseNumber);
  const spans = longIntegerSpans(text);
  if (spans.length === 0) return JSON.parse(text);
  let marked = '';
  let from = 0;
  for (const [start, end] of spans) {
    marked += `${text.slice(from, start)}"\\u0000${text.slice(start, end)}"`;
    from = end;
  }
  return restoreLongIntegers(JSON.parse(marked + text.slice(from)));
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
