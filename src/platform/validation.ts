import { Ajv, type AnySchema, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { addBoundedJsonKeyword } from './bounded-json.js';
import { AppError, ErrorKinds, fieldName, MAX_PROBLEMS, type Problem } from './errors.js';
import { escapePointer, unescapePointer } from './json-pointer.js';
import { OPENAPI_FORM } from './openapi-form.js';
import { addSnowflakeKeyword } from './snowflake.js';
import { addTextKeyword } from './text.js';
import { addTimestampKeyword } from './timestamp.js';

/** Annotations our schemas carry for documentation and error messages; Ajv must know them in strict mode. */
const ANNOTATIONS = ['x-reason', 'example', OPENAPI_FORM];

function createAjv(coerceTypes: false | 'array'): Ajv {
  const ajv = new Ajv({
    allErrors: true, // one ErrorResponse lists the request's problems, up to MAX_PROBLEMS (stopsAtCap)
    verbose: true, // errors carry their schema, for `x-reason`
    useDefaults: true,
    coerceTypes,
    removeAdditional: false,
    strict: true,
    code: { process: stopsAtCap },
  });
  addFormats.default(ajv);
  ajv.addVocabulary(ANNOTATIONS);
  addSnowflakeKeyword(ajv);
  addBoundedJsonKeyword(ajv);
  addTimestampKeyword(ajv);
  addTextKeyword(ajv);
  return ajv;
}

/**
 * Ajv's `allErrors` looks at every field however many are wrong (its authors advise against it on a server
 * for that reason), and Ajv has no option to stop after some number of errors: a 1 MiB body of 90,000
 * unknown keys made 90,000 errors, as much work again as parsing it (measured: 70-90 ms against a parse of
 * 110-140 ms), and an answer of 13.5 MB. So each validator Ajv generates is given, through its public
 * `code.process` option, a return right after the error that makes MAX_PROBLEMS: validation stops at the
 * cap and the first problems found are those answered.
 *
 * That edits the text of Ajv's generated code, which is no documented interface: it looks for the two
 * statements by which Ajv counts an error (`errors++;` after pushing one, `errors = vErrors.length;` after
 * taking a nested validator's), and test/platform/validation-cap.test.ts fails if a body with thousands
 * of problems is no longer stopped at the cap (an Ajv that words them otherwise). A validator that may take
 * errors back (a union, `not`, `if`: Ajv resets `errors = _errsN` when another branch passes) is left whole,
 * since stopping inside a branch could refuse a valid value; no request schema of the service has one at
 * a level that can make many errors.
 */
function stopsAtCap(code: string): string {
  if (code.includes('errors = _errs')) return code;
  const name = /return function (validate\d+)\(/.exec(code)?.[1];
  if (!name) return code;
  const stop = `if(errors>=${MAX_PROBLEMS}){${name}.errors=vErrors;return false;}`;
  return code
    .replaceAll('errors++;', `errors++;${stop}`)
    .replaceAll('errors = vErrors.length;', `errors = vErrors.length;${stop}`);
}

/** The Ajv instances, made when first needed and shared by every app of the process. */
let instances: { readonly forBody: Ajv; readonly forText: Ajv } | undefined;
/**
 * Validators already compiled, by part and schema text: an app built again in the same process (the
 * tests build hundreds) reuses them instead of generating and compiling the same code again. Bounded by the
 * schemas of the code: each route's, a handful of parts each.
 */
const compiled = new Map<string, ValidateFunction | TextValidator>();

/**
 * The validator compiler: JSON bodies are validated as they are typed (no coercion: `"5"` is not 5),
 * while params and query strings, which are text by nature, are coerced. Routes inline their schemas;
 * a schema shared through `app.addSchema` serves responses and the OpenAPI document only. A validator is a
 * pure function of its schema: the compilers of every app of a process share them.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<AnySchema> {
  return ({ schema, httpPart }) => {
    const part = httpPart === 'body' ? 'body' : 'text';
    const key = `${part} ${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      instances ??= { forBody: createAjv(false), forText: createAjv('array') };
      validate =
        part === 'body'
          ? instances.forBody.compile(schema)
          : finiteNumbersOnly(instances.forText.compile(schema), schema);
      compiled.set(key, validate);
    }
    return validate;
  };
}

type TextValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * A text part (path parameters, query string, headers) is coerced, and Ajv reads `1e400` there as Infinity,
 * which its `minimum` and `maximum` let through (they look at finite numbers only): such a field is refused
 * here, with the reason its own schema gives. Only the part's numeric fields are looked at; a part with none
 * (a player's path) is validated by Ajv alone.
 */
function finiteNumbersOnly(validate: ValidateFunction, schema: AnySchema): ValidateFunction | TextValidator {
  const fields: Record<string, unknown> = (typeof schema === 'object' && schema.properties) || {};
  const numeric = Object.keys(fields).filter((name) => takesNumbers(fields[name]));
  if (numeric.length === 0) return validate;
  const check: TextValidator = (data) => {
    if (!validate(data)) {
      check.errors = validate.errors;
      return false;
    }
    const values = data as Record<string, unknown>;
    const name = numeric.find((field) => [values[field]].flat().some(isEndless));
    check.errors =
      name === undefined
        ? null
        : [
            {
              keyword: 'type',
              instancePath: `/${escapePointer(name)}`,
              schemaPath: `#/properties/${name}`,
              params: { type: 'number' },
              message: 'must be a finite number',
              parentSchema: fields[name] as AnySchemaObject,
            },
          ];
    return name === undefined;
  };
  return check;
}

const isEndless = (value: unknown) => typeof value === 'number' && !Number.isFinite(value);

/** Whether a field's schema lets a number through (its type, or one of its alternatives' or items'). */
function takesNumbers(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, anyOf, oneOf, items } = schema as Record<string, unknown>;
  const types = [type].flat();
  return (
    types.includes('number') ||
    types.includes('integer') ||
    [anyOf, oneOf].some((alternatives) => Array.isArray(alternatives) && alternatives.some(takesNumbers)) ||
    takesNumbers(items)
  );
}

/** How much of a field name the client made up an error quotes back. */
const SHOWN_NAME_LENGTH = 64;

/**
 * The parts of a request: the cause of a 400 about each, and the prefix its fields are named under
 * (`body/...`). Validation and the routes' handling of a service's input errors (http/input-errors.ts)
 * both answer by it.
 */
export const REQUEST_PARTS = {
  body: { cause: 'Invalid request body', prefix: 'body' },
  params: { cause: 'Invalid path parameter', prefix: 'params' },
  querystring: { cause: 'Invalid query string', prefix: 'query' },
  headers: { cause: 'Invalid request header', prefix: 'headers' },
} as const;
const PART_NAMES: Record<string, { cause: string; prefix: string }> = REQUEST_PARTS;

/**
 * Turns Ajv's errors into one problem per faulty field, each naming the field's path: the first
 * MAX_PROBLEMS of them.
 */
export function validationError(errors: readonly ErrorObject[], part: string): AppError {
  const { cause, prefix } = PART_NAMES[part] ?? { cause: 'Invalid request', prefix: part };
  const problems = new Map<string, Problem>();
  // Ajv reports a failed anyOf once for the union and once per branch; the union's error speaks for it.
  const unions = errors.filter((error) => error.keyword === 'anyOf').map((error) => error.schemaPath);
  for (const error of errors) {
    if (problems.size === MAX_PROBLEMS) break;
    if (unions.some((union) => error.schemaPath.startsWith(`${union}/`))) continue;
    const pointer = pointerOf(error);
    if (problems.has(pointer)) continue;
    problems.set(pointer, problemOf(error, pointer, prefix, part));
  }
  return new AppError([...problems.values()], { cause });
}

function pointerOf(error: ErrorObject): string {
  if (error.keyword === 'required')
    return `${error.instancePath}/${escapePointer(error.params.missingProperty)}`;
  if (error.keyword === 'additionalProperties') {
    return `${error.instancePath}/${escapePointer(error.params.additionalProperty)}`;
  }
  return error.instancePath;
}

function problemOf(error: ErrorObject, pointer: string, prefix: string, part: string): Problem {
  const field = nameOf(pointer, part);
  const schemaReason = (error.parentSchema as Record<string, unknown> | undefined)?.['x-reason'];
  if (error.keyword === 'required') {
    return {
      kind: ErrorKinds.MISSING_FIELD,
      reason: `${field} is required`,
      developerReason: `${prefix}${pointer} is required`,
    };
  }
  if (error.keyword === 'additionalProperties') {
    // The name is the client's own text: quoted back only in part.
    const shown = field.length > SHOWN_NAME_LENGTH ? `${field.slice(0, SHOWN_NAME_LENGTH)}...` : field;
    const shownPointer =
      pointer.length > SHOWN_NAME_LENGTH ? `${pointer.slice(0, SHOWN_NAME_LENGTH)}...` : pointer;
    return {
      kind: ErrorKinds.UNKNOWN_FIELD,
      reason: `${shown} is not a field of this request`,
      developerReason: `${prefix}${shownPointer} is not allowed here; remove it`,
    };
  }
  if (pointer === '' && error.data == null && part === 'body') {
    return {
      kind: ErrorKinds.MISSING_FIELD,
      reason: 'a request body is required',
      developerReason: 'body is required: send a JSON object',
    };
  }
  const text = typeof schemaReason === 'string' ? schemaReason : messageOf(error);
  return {
    kind: ErrorKinds.INVALID_FIELD,
    reason: `${field} ${text}`,
    developerReason: `${prefix}${pointer} ${text}`,
  };
}

function messageOf(error: ErrorObject): string {
  if (error.keyword === 'enum')
    return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
  if (error.keyword === 'const') return `must be ${JSON.stringify(error.params.allowedValue)}`;
  return error.message ?? 'is invalid';
}

/** `/grants/1` -> `grants[1]`, `/interaction/user_id` -> `interaction.user_id`; the part's name at the top. */
function nameOf(pointer: string, part: string): string {
  if (pointer === '') return part === 'body' ? 'the request body' : part;
  const path = pointer
    .slice(1)
    .split('/')
    .map(unescapePointer)
    .map((segment) => (/^[0-9]+$/.test(segment) ? Number(segment) : segment));
  return fieldName(path);
}
