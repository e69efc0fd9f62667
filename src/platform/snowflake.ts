import type { Ajv, SchemaValidateFunction } from 'ajv';
import { type TUnsafe, Type } from 'typebox';
import { LongInteger } from './json.js';
import { OPENAPI_FORM } from './openapi-form.js';

/** Discord snowflakes are unsigned 64-bit integers. */
export const MAX_SNOWFLAKE = 2n ** 64n - 1n;
/** Decimal digits as a client writes an ID: no sign, no leading zero. */
const DIGITS = /^[1-9][0-9]{0,19}$/;

/**
 * A pattern of the decimal numbers of `minDigits` or more digits (no leading zero) up to `max`, exactly: the
 * document's form of an ID as text (`{snowflake}`, an ID sent as a string), which a client's validator can
 * check without arithmetic. Plain ASCII classes and counts: every regular-expression dialect reads it alike.
 */
export function decimalsUpTo(max: bigint, minDigits = 1): string {
  const digits = max.toString();
  const last = digits.length - 1;
  const shorter = minDigits <= last ? [`[1-9][0-9]{${minDigits - 1},${last - 1}}`] : [];
  const full: string[] = [];
  for (let index = 0; index <= last; index++) {
    // Equal to `max` up to `index`, then a smaller digit there (or at most its last digit), then any digits.
    const top = Number(digits[index]) - (index === last ? 0 : 1);
    const lowest = index === 0 ? 1 : 0;
    if (top < lowest) continue;
    const rest = last - index;
    full.push(
      `${digits.slice(0, index)}[${lowest}-${top}]${rest > 0 ? `[0-9]{${rest}}` : ''}`.replace(
        /\[(\d)-\1\]/,
        '$1',
      ),
    );
  }
  return `^(${[...shorter, ...full].join('|')})$`;
}

/** An ID as decimal text, 1 to 2^64-1, exactly. */
export const SNOWFLAKE_TEXT_PATTERN = decimalsUpTo(MAX_SNOWFLAKE);

/**
 * How the document declares a 64-bit ID as a JSON integer: `uint64` (the OpenAPI format registry's unsigned
 * 64-bit integer), never `int64`, which generators map to a signed 64-bit type (Java's `long`, Go's `int64`)
 * that overflows above 2^63-1. The range is in the description: the document is JSON read by parsers that
 * would round a `maximum` of 2^64-1.
 */
export const SNOWFLAKE_INTEGER = { type: 'integer', format: 'uint64', minimum: 1 } as const;

const SNOWFLAKE_KEYWORD = 'x-snowflake';
const SNOWFLAKE_REASON = `must be an integer from 1 to ${MAX_SNOWFLAKE}, as a JSON number or a decimal string`;

/**
 * A snowflake (1 to 2^64-1) from a JSON integer, a decimal string or a bigint; undefined when it is not one.
 * A JSON number with an integer value is that integer whatever its spelling (`1e3` is 1000, as in JSON
 * Schema); only numbers below 2^53 can be spelled so, and those are exact.
 */
export function parseSnowflake(value: unknown): bigint | undefined {
  let id: bigint;
  if (typeof value === 'bigint') id = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) id = BigInt(value);
  else if (typeof value === 'string' && DIGITS.test(value)) id = BigInt(value);
  else if (value instanceof LongInteger) id = BigInt(value.digits);
  else return undefined;
  return id >= 1n && id <= MAX_SNOWFLAKE ? id : undefined;
}

const SNOWFLAKE_IN = `1 to ${MAX_SNOWFLAKE}, as a decimal string (exact in any client) or a JSON integer.`;
const SNOWFLAKE_OUT = `A JSON integer from 1 to ${MAX_SNOWFLAKE} (unsigned 64-bit): parse it exactly (see the document's description).`;

/** How the document tells clients to read and write 64-bit IDs (its description's section). */
export const SNOWFLAKE_NOTE = [
  '## 64-bit IDs',
  `Discord IDs (\`owner\`, \`user_id\`, \`server_id\`, \`{snowflake}\`) are unsigned 64-bit integers, 1 to ${MAX_SNOWFLAKE}: ` +
    'more than a double holds exactly (2^53) and more than a signed 64-bit integer holds (2^63-1).',
  '',
  '- **In answers** they are JSON integers, declared `type: integer, format: uint64` (never `int64`). Parse ' +
    'the body with a JSON parser that keeps large integers exact, and hold them as text or as an unsigned or ' +
    "arbitrary-precision integer: in JavaScript `JSON.parse` with a reviver that takes the number's source " +
    'text (`(key, value, context) => context.source`), or `lossless-json` / `json-bigint`; in Java ' +
    '`BigInteger` or `Long.parseUnsignedLong`; in Go `uint64` or `json.Number` (`Decoder.UseNumber`); in ' +
    'Python `int` (exact already); in Rust `u64`. A plain `JSON.parse` turns 987654321098765432 into 987654321098765400.',
  '- **In requests** send them as decimal strings (`"987654321098765432"`), which every client writes ' +
    'exactly; a JSON integer is taken too. A string has no sign and no leading zero.',
  '- `snowflake` in `UserProfileResult` and `LinkedAccount` is a decimal string already.',
].join('\n');

/**
 * A 64-bit ID in a request. Clients may send it as a JSON integer (any size: the body parser keeps the
 * digits) or as a decimal string; the handler always receives an exact `bigint`.
 */
export function Snowflake(options: { description?: string } = {}): TUnsafe<bigint> {
  return Type.Unsafe<bigint>({
    // The keyword checks everything; the document shows what it takes. (A JSON integer beyond 2^53 reaches
    // validation as a LongInteger, which no type of JSON Schema describes.)
    [SNOWFLAKE_KEYWORD]: true,
    [OPENAPI_FORM]: {
      anyOf: [{ type: 'string', pattern: SNOWFLAKE_TEXT_PATTERN }, SNOWFLAKE_INTEGER],
    },
    'x-reason': SNOWFLAKE_REASON,
    description: `${options.description ?? 'A 64-bit Discord ID (snowflake).'} ${SNOWFLAKE_IN}`,
    example: '987654321098765432',
  });
}

/**
 * A `{snowflake}` path parameter: 17 to 20 digits (any Discord ID since 2015), no leading zero (which would
 * spell a shorter ID), and at most 2^64-1.
 */
const SNOWFLAKE_PARAM_PATTERN = decimalsUpTo(MAX_SNOWFLAKE, 17);
const SNOWFLAKE_PARAM = new RegExp(SNOWFLAKE_PARAM_PATTERN);
const SNOWFLAKE_PARAM_REASON = `must be a Discord ID: 17 to 20 digits, at most ${MAX_SNOWFLAKE}`;

/**
 * A 64-bit ID as a path parameter: the text of 17 to 20 digits, at most 2^64-1; the handler receives an
 * exact `bigint`.
 */
export function SnowflakeParam(options: { description?: string } = {}): TUnsafe<bigint> {
  return Type.Unsafe<bigint>({
    [SNOWFLAKE_KEYWORD]: 'path',
    type: 'string',
    pattern: SNOWFLAKE_PARAM_PATTERN,
    'x-reason': SNOWFLAKE_PARAM_REASON,
    description: options.description ?? 'A Discord ID (snowflake): 17 to 20 decimal digits.',
    example: '123456789012345678',
  });
}

/** A `{snowflake}` parameter's value outside a route schema (the command line): undefined when not one. */
export function parseSnowflakeParam(text: unknown): bigint | undefined {
  return typeof text === 'string' && SNOWFLAKE_PARAM.test(text) ? parseSnowflake(text) : undefined;
}

/** A 64-bit ID in a response: written as JSON integer digits, exact (the serializer writes bigints as is). */
export function SnowflakeOut(options: { description?: string } = {}): TUnsafe<bigint> {
  return Type.Unsafe<bigint>({
    ...SNOWFLAKE_INTEGER,
    description: `${options.description ?? 'A 64-bit Discord ID (snowflake), exact.'} ${SNOWFLAKE_OUT}`,
  });
}

/** Teaches an Ajv instance the snowflake keyword: it checks the range and replaces the value by a bigint. */
export function addSnowflakeKeyword(ajv: Ajv): void {
  // `true`: a JSON integer or a decimal string; 'path': the text of a `{snowflake}` path parameter. The
  // keyword checks the form itself: Ajv may run it before `pattern`, which then sees the bigint and passes.
  const validate: SchemaValidateFunction = (mode: true | 'path', data, _schema, context) => {
    const id = mode === 'path' ? parseSnowflakeParam(data) : parseSnowflake(data);
    if (id === undefined) {
      validate.errors = [
        {
          keyword: SNOWFLAKE_KEYWORD,
          message: mode === 'path' ? SNOWFLAKE_PARAM_REASON : SNOWFLAKE_REASON,
          params: {},
        },
      ];
      return false;
    }
    if (context?.parentData !== undefined) {
      (context.parentData as Record<string | number, unknown>)[context.parentDataProperty] = id;
    }
    return true;
  };
  ajv.addKeyword({
    keyword: SNOWFLAKE_KEYWORD,
    modifying: true,
    errors: true,
    schemaType: ['boolean', 'string'],
    validate,
  });
}
