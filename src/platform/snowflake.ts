import type { Ajv, SchemaValidateFunction } from 'ajv';
import { type TUnsafe, Type } from 'typebox';
import { LongInteger } from './json.js';
import { OPENAPI_FORM } from './openapi-form.js';

/** Discord snowflakes are unsigned 64-bit integers. */
export const MAX_SNOWFLAKE = 2n ** 64n - 1n;
/** Decimal digits as a client writes an ID: no sign, no leading zero. */
const DIGITS = /^[1-9][0-9]{0,19}$/;

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
      anyOf: [
        { type: 'string', pattern: DIGITS.source },
        { type: 'integer', minimum: 1 },
      ],
    },
    'x-reason': SNOWFLAKE_REASON,
    description: options.description ?? 'A 64-bit Discord ID (snowflake), as an integer or a decimal string.',
  });
}

/**
 * A `{snowflake}` path parameter: 17 to 20 digits (any Discord ID since 2015), no leading zero (which would
 * spell a shorter ID), and at most 2^64-1.
 */
const SNOWFLAKE_PARAM_PATTERN = '^[1-9][0-9]{16,19}$';
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
    type: 'integer',
    format: 'int64',
    minimum: 1,
    description: options.description ?? 'A 64-bit Discord ID (snowflake), exact.',
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
