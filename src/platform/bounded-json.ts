import type { Ajv } from 'ajv';
import { type TUnsafe, Type } from 'typebox';
import { LongInteger, serializeJson } from './json.js';

const KEYWORD = 'x-bounded-json';

export interface JsonBounds {
  /** The most bytes the value may take as JSON. */
  readonly maxBytes: number;
  /** The deepest nesting of objects and arrays, the value itself counting as 1. */
  readonly maxDepth: number;
}

/**
 * A free-form JSON object a client gives the service to keep (a bot's command options), bounded in size
 * and nesting so that one request cannot store, or make every reader parse, an arbitrarily large value.
 */
export function BoundedObject(
  bounds: JsonBounds & { description: string },
): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    // Open: any members (a generator reads a bare `type: object` as an object with none).
    additionalProperties: true,
    [KEYWORD]: { maxBytes: bounds.maxBytes, maxDepth: bounds.maxDepth },
    'x-reason': `must be an object of at most ${bounds.maxBytes} bytes as JSON, nested at most ${bounds.maxDepth} deep`,
    description: `${bounds.description} At most ${bounds.maxBytes} bytes as JSON, nested at most ${bounds.maxDepth} deep.`,
  });
}

/** How deeply `value` nests objects and arrays (a scalar is 0), looking no deeper than `limit` + 1. */
function depthOf(value: unknown, limit: number): number {
  if (value === null || typeof value !== 'object' || value instanceof LongInteger) return 0;
  if (limit < 0) return 1;
  let deepest = 0;
  for (const inner of Object.values(value)) deepest = Math.max(deepest, depthOf(inner, limit - 1));
  return 1 + deepest;
}

/** Teaches an Ajv instance the bounded-JSON keyword. */
export function addBoundedJsonKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: KEYWORD,
    schemaType: 'object',
    errors: false,
    validate: (bounds: JsonBounds, data: unknown) =>
      depthOf(data, bounds.maxDepth) <= bounds.maxDepth &&
      Buffer.byteLength(serializeJson(data)) <= bounds.maxBytes,
  });
}
