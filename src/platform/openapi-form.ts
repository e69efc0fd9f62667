/**
 * The key under which a schema carries its form for the OpenAPI document, when what validates it is a
 * custom keyword (a snowflake takes a JSON integer beyond 2^53, which reaches validation as a value no JSON
 * Schema type describes). Validation ignores it; the document shows it in the schema's place.
 */
export const OPENAPI_FORM = 'x-openapi';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/** A rendered document (or part of one) with every schema that carries an OpenAPI form shown as it. */
export function showOpenApiForms(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(showOpenApiForms);
  if (!isObject(node)) return node;
  const { [OPENAPI_FORM]: form, ...rest } = node;
  const shown = Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [key, showOpenApiForms(value)]),
  );
  return isObject(form) ? { ...shown, ...form } : shown;
}
