import { isInteger, isSafeNumber, LosslessNumber, parse } from 'lossless-json';
import { uint64Properties } from './schema.js';

const ID_PROPERTIES = new Set(uint64Properties);

/**
 * Parses an answer's JSON without losing digits: a 64-bit ID (a property the document declares
 * `format: uint64`: `owner`, `user_id`, `server_id`) becomes the string of its exact digits, another integer
 * beyond 2^53 (one inside a Hypixel object) becomes its digits as a string too, and every other number a
 * `number`. `JSON.parse` would round 987654321098765432 to 987654321098765400.
 */
export function parseJson(text: string): unknown {
  return parse(
    text,
    (key, value) => {
      if (!(value instanceof LosslessNumber)) return value;
      if (ID_PROPERTIES.has(key)) return value.value;
      if (isInteger(value.value) && !isSafeNumber(value.value)) return value.value;
      return Number(value.value);
    },
    (digits) => new LosslessNumber(digits),
  );
}
