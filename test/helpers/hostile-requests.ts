import fc from 'fast-check';

/**
 * Hostile requests generated from the OpenAPI document: for each operation, its path parameters, query and
 * body as its schemas describe them, each part either plausible (valid by its schema, so that the request
 * gets past the first check and reaches the rules behind it) or hostile (wrong types, missing and extra
 * fields, huge strings, deep nesting, unicode, numbers beyond 2^64, negative and fractional IDs, path
 * traversal and SQL-looking text).
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/** A JSON value as it goes on the wire: `Raw` is written as it is (numbers beyond a double keep their digits). */
class Raw {
  constructor(readonly text: string) {}
}
export type Wire = Raw | string | boolean | null | readonly Wire[] | { readonly [key: string]: Wire };

/** The JSON text of a wire value. */
function wireText(value: Wire): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(wireText).join(',')}]`;
  if (isObject(value)) {
    const members = Object.entries(value as { [key: string]: Wire });
    return `{${members.map(([key, inner]) => `${JSON.stringify(key)}:${wireText(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** One operation of the document, as a request generator needs it. */
export interface Operation {
  readonly method: string;
  /** As the document writes it: `/player/{player}`. */
  readonly path: string;
  readonly pathParams: readonly Parameter[];
  readonly queryParams: readonly Parameter[];
  /** The JSON body's schema, when the operation takes one. */
  readonly body: Json | undefined;
  readonly secured: boolean;
  /** The statuses it documents. */
  readonly statuses: ReadonlySet<string>;
}

export interface Parameter {
  readonly name: string;
  readonly schema: Json;
  readonly required: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Every operation of an OpenAPI document. */
export function operationsOf(document: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    if (!isObject(item)) continue;
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method) || !isObject(operation)) continue;
      const parameters = (Array.isArray(operation.parameters) ? operation.parameters : []).filter(isObject);
      const byPlace = (place: string): Parameter[] =>
        parameters
          .filter((parameter) => parameter.in === place)
          .map((parameter) => ({
            name: String(parameter.name),
            schema: isObject(parameter.schema) ? parameter.schema : {},
            required: parameter.required === true,
          }));
      const content = isObject(operation.requestBody) ? operation.requestBody.content : undefined;
      const jsonBody = isObject(content) ? content['application/json'] : undefined;
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: byPlace('path'),
        queryParams: byPlace('query'),
        body: isObject(jsonBody) && isObject(jsonBody.schema) ? jsonBody.schema : undefined,
        secured: Array.isArray(operation.security) && operation.security.length > 0,
        statuses: new Set(Object.keys(isObject(operation.responses) ? operation.responses : {})),
      });
    }
  }
  return operations;
}

const HUGE = 'a'.repeat(70_000);
const SNOWFLAKE = '123456789012345678';
/** Text that has broken services before: traversal, SQL, markup, format strings, odd unicode. */
const NASTY_TEXT = [
  '',
  ' ',
  '../../../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  "' OR '1'='1' --",
  '1; DROP TABLE tokens; --',
  '"); select pg_sleep(10); --',
  '<script>alert(1)</script>',
  '%s%s%s%n',
  // A log4j-style lookup: text, never a template here.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the point is the literal text
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'null',
  'NaN',
  'Infinity',
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  '\udfff\ud800',
  '\u202e\u2066evil',
  '\u200b\u200d\ufeff',
  'Ａｄｍｉｎ',
  '𝕳𝖞𝖕𝖎𝖝𝖊𝖑 💥',
  'a'.repeat(101),
  'a'.repeat(5000),
  HUGE,
  '18446744073709551616',
  '99999999999999999999999999',
  '-1',
  '-123456789012345678',
  '0',
  '00123',
  '1.5',
  '1e3',
  '0x1f',
  ' 123',
  '20934ef9488c465180a78f861586b4cf',
  '20934ef9-488c-4651-80a7-8f861586b4cf',
  'Minikloon',
];
/** Numbers as JSON writes them, beyond what a 64-bit ID or a double holds among them. */
const NASTY_NUMBERS = [
  '0',
  '-0',
  '-1',
  '1.5',
  '-1.5',
  '1e400',
  '-1e400',
  '1e-400',
  '18446744073709551615',
  '18446744073709551616',
  '9223372036854775808',
  '-9223372036854775809',
  '123456789012345678',
  '9007199254740993',
  '99999999999999999999999999999999999999',
  '0.0000000000000000001',
];

const nastyText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_TEXT) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);
const nastyNumber = fc.oneof(
  fc.constantFrom(...NASTY_NUMBERS).map((text) => new Raw(text)),
  fc.double({ noNaN: true }).map((value) => new Raw(String(Number.isFinite(value) ? value : 0))),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((value) => new Raw(value.toString())),
);
/** Arrays or objects nested `depth` deep around a value. */
const nested = fc
  .tuple(fc.integer({ min: 2, max: 3000 }), fc.boolean())
  .map(
    ([depth, asArray]) =>
      new Raw(
        asArray
          ? `${'['.repeat(depth)}${']'.repeat(depth)}`
          : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
      ),
  );

/** Any hostile JSON value. */
const hostileValue: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 4, arbitrary: nastyText },
  { weight: 4, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.constantFrom<Wire>(true, false, null, [], {}) },
  { weight: 1, arbitrary: nested },
  { weight: 1, arbitrary: fc.array(nastyText, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyText, nastyText, { maxKeys: 3 }) },
);

/** A value valid by `schema` (as far as a simple reading of it goes), to get past the first check. */
export function plausible(schema: Json): fc.Arbitrary<Wire> {
  // One ID in its two spellings: rules that tie two IDs of a request together (the user a log is about, in
  // two places) then hold, and the request gets past them.
  if (schema['x-snowflake'] === true) return fc.constantFrom(new Raw(SNOWFLAKE), SNOWFLAKE);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...schema.anyOf.filter(isObject).map(plausible));
  if (schema.const !== undefined) return fc.constant(schema.const as Wire);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Wire[]));
  if (schema.example !== undefined && typeof schema.example !== 'object')
    return fc.constant(schema.example as Wire);
  switch (schema.type) {
    case 'object':
      return plausibleObject(schema);
    case 'array':
      return fc.array(isObject(schema.items) ? plausible(schema.items) : fc.constant(null), {
        maxLength: Math.min(Number(schema.maxItems ?? 3), 3),
      });
    case 'integer':
    case 'number':
      return fc
        .integer({
          min: Number(schema.minimum ?? 0),
          max: Math.min(Number(schema.maximum ?? 1_000_000), 1_000_000),
        })
        .map((value) => new Raw(String(value)));
    case 'boolean':
      return fc.boolean();
    case 'string':
      return plausibleString(schema);
    default:
      return fc.constant({});
  }
}

function plausibleString(schema: Json): fc.Arbitrary<Wire> {
  if (schema.format === 'date') return fc.constant('2026-11-22');
  if (schema.format === 'date-time') return fc.constant('2026-11-22T04:05:17.000Z');
  if (typeof schema.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(schema.pattern, 'u'));
    } catch {
      // A pattern fast-check cannot generate from (a lookahead): plain letters.
    }
  }
  return fc.string({ minLength: Number(schema.minLength ?? 1), maxLength: 12, unit: 'grapheme-ascii' });
}

/** An object with each required property, and each optional one or not, plausible. */
function plausibleObject(schema: Json): fc.Arbitrary<Wire> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const fields = Object.fromEntries(
    Object.entries(properties)
      .filter((entry): entry is [string, Json] => isObject(entry[1]))
      .map(([name, property]) => [name, plausible(property)]),
  );
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return fc.record(fields, { requiredKeys: required.filter((name) => name in fields) }) as fc.Arbitrary<Wire>;
}

/** One change that makes a plausible value hostile: a field's value replaced, a field removed or added. */
interface Mutation {
  readonly at: number;
  readonly how: 'replace' | 'remove' | 'add';
  readonly key: string;
  readonly value: Wire;
}
const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  how: fc.constantFrom('replace', 'remove', 'add'),
  key: nastyText,
  value: hostileValue,
});

/** Every object within `value` (itself included), outermost first. */
function objectsWithin(value: Wire): { [key: string]: Wire }[] {
  if (value instanceof Raw || value === null || typeof value !== 'object') return [];
  const inner = (Array.isArray(value) ? value : Object.values(value)).flatMap((item: Wire) =>
    objectsWithin(item),
  );
  return Array.isArray(value) ? inner : [value as { [key: string]: Wire }, ...inner];
}

/** A copy of `value` with one mutation applied to one of its objects (the `at`-th, wrapping around). */
function mutated(value: Wire, change: Mutation): Wire {
  const copy = copyOf(value);
  const objects = objectsWithin(copy);
  const target = objects[change.at % Math.max(objects.length, 1)];
  if (!target) return change.value;
  const keys = Object.keys(target);
  const key = keys[Math.floor(change.at / Math.max(objects.length, 1)) % Math.max(keys.length, 1)];
  if (change.how === 'add' || key === undefined) target[change.key] = change.value;
  else if (change.how === 'remove') delete target[key];
  else target[key] = change.value;
  return copy;
}

function copyOf(value: Wire): Wire {
  if (value instanceof Raw || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: Wire) => copyOf(item));
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copyOf(inner)]));
}

/** A value from `schema`: plausible as it is, or with one or two hostile changes. */
const valueFor = (schema: Json): fc.Arbitrary<Wire> =>
  fc.oneof(
    plausible(schema),
    fc.tuple(plausible(schema), mutation).map(([value, change]) => mutated(value, change)),
    fc
      .tuple(plausible(schema), mutation, mutation)
      .map(([value, first, second]) => mutated(mutated(value, first), second)),
  );

/** A path parameter or query value as text: plausible, or hostile text or number. */
export const parameterText = (schema: Json): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 2, arbitrary: plausible(schema).map(textOf) },
    { weight: 2, arbitrary: nastyText },
    { weight: 1, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  );

export const textOf = (value: Wire): string =>
  value instanceof Raw ? value.text : typeof value === 'string' ? value : wireText(value);

/** How a body is sent: as JSON, or in a way a JSON route must refuse cleanly. */
export type BodyForm =
  | { readonly kind: 'json'; readonly value: Wire }
  | { readonly kind: 'truncated'; readonly value: Wire; readonly keep: number }
  | { readonly kind: 'content-type'; readonly value: Wire; readonly contentType: string }
  | { readonly kind: 'none' }
  | { readonly kind: 'raw'; readonly text: string };

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/json-patch+json',
  'application/xml',
  'application/json, text/plain',
  '',
];
const RAW_BODIES = [
  '',
  'null',
  '[]',
  '"text"',
  '1',
  '{',
  '}',
  '{"a":}',
  '{"a":1,"a":2}',
  '\u0000',
  'undefined',
  '{"__proto__":{"admin":true}}',
  '\ufeff{}',
];

/** A body for an operation that takes `schema`: mostly a JSON value from it, else a malformed one. */
export const bodyFor = (schema: Json): fc.Arbitrary<BodyForm> =>
  fc.oneof(
    { weight: 8, arbitrary: valueFor(schema).map((value) => ({ kind: 'json', value }) as const) },
    { weight: 1, arbitrary: hostileValue.map((value) => ({ kind: 'json', value }) as const) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(plausible(schema), fc.double({ min: 0, max: 1, noNaN: true }))
        .map(([value, share]) => ({ kind: 'truncated', value, keep: share }) as const),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(plausible(schema), fc.constantFrom(...CONTENT_TYPES))
        .map(([value, contentType]) => ({ kind: 'content-type', value, contentType }) as const),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'none' } as const) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((text) => ({ kind: 'raw', text }) as const) },
  );

/** The payload and content type a body form goes out with (no content type: none sent). */
export function payloadOf(form: BodyForm): { payload?: string; contentType?: string } {
  switch (form.kind) {
    case 'json':
      return { payload: wireText(form.value), contentType: 'application/json' };
    case 'truncated': {
      const text = wireText(form.value);
      return { payload: text.slice(0, Math.floor(text.length * form.keep)), contentType: 'application/json' };
    }
    case 'content-type':
      return { payload: wireText(form.value), contentType: form.contentType || undefined };
    case 'none':
      return {};
    case 'raw':
      return { payload: form.text, contentType: 'application/json' };
  }
}

/** Path segments sent as they are, not percent-encoded: traversal, broken escapes, matrix parameters. */
const RAW_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '..%2f..%2fadmin',
  '%00',
  '%',
  '%zz',
  '%c0%ae%c0%ae',
  ';',
  'a;b=c',
  '*',
  '%ff%fe',
];

/** A path parameter as it goes in the URL: percent-encoded text, or a raw segment. */
export const pathSegment = (schema: Json): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: plausible(schema).map((value) => percentEncoded(textOf(value))) },
    { weight: 6, arbitrary: parameterText(schema).map(percentEncoded) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  );

/** Text percent-encoded as UTF-8 bytes (a lone surrogate goes as U+FFFD, as a client's library sends it). */
function percentEncoded(text: string): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** A URL for the operation: each path parameter replaced by its segment, the query from `query`. */
export function urlOf(
  operation: Operation,
  pathSegments: Readonly<Record<string, string>>,
  query: readonly (readonly [string, string])[],
): string {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => pathSegments[name] ?? '');
  const search = new URLSearchParams(
    query.map(([name, value]): [string, string] => [name, value]),
  ).toString();
  return search ? `${path}?${search}` : path;
}
