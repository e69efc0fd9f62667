import { type Static, type TOptional, type TProperties, type TSchema, Type } from 'typebox';

/**
 * Schemas of another system's objects that the service passes through as they came (a Hypixel player, a
 * SkyBlock profile), for the OpenAPI document only: the answers that carry them are sent as the cached bytes
 * (`sendJsonBytes`, a joined body), never through a serializer, so these schemas change no byte of them.
 * They name the fields clients commonly read, so that generated clients have types for them; they do not
 * say the object holds them, or only them.
 */

/**
 * What a component of such an object says of its types, `system` being who sent it: a field may be missing,
 * be of another type now and then, and fields not named may be there.
 */
export const asSentBy = (system: string): string =>
  `As ${system} sent it, unchecked: the fields named are the commonly used ones, typed as ${system} sends them ` +
  `(${system} does not guarantee its types); any of them may be missing, and any other field may be there.`;

/** `OpenObject`'s options: what the object is, and its name when it is a shared schema (a component). */
export interface OpenObjectOptions {
  readonly description?: string;
  readonly $id?: string;
}

type Optional<P extends TProperties> = { [K in keyof P]: TOptional<P[K]> };

/**
 * An open object: every named field optional (the other system leaves out what does not apply), and any
 * other field allowed (`additionalProperties: true`), whatever it holds.
 */
export function OpenObject<P extends TProperties>(properties: P, options: OpenObjectOptions = {}) {
  const optional = Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => [name, Type.Optional(schema)]),
  ) as Optional<P>;
  return Type.Object(optional, { ...options, additionalProperties: true });
}

/** An object whose every field (by any name) holds `value`: a map, such as one keyed by IDs. */
export const MapOf = <V extends TSchema>(value: V, description: string) =>
  Type.Object({}, { additionalProperties: value, description });

/**
 * A reference to a shared schema (registered with `app.addSchema`, by its `$id`): the document names it as
 * a component (`#/components/schemas/<$id>`), which client generators turn into a named type.
 */
export function refTo<S extends TSchema>(schema: S) {
  const { $id } = schema as { $id?: unknown };
  if (typeof $id !== 'string') throw new TypeError('refTo: the schema has no $id');
  return Type.Unsafe<Static<S>>({ $ref: `${$id}#` });
}
