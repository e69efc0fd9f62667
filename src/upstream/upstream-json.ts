import { parse, stringify } from 'lossless-json';
import { UpstreamFailure } from './upstream-failure.js';

/** Any integer literal long enough that a double might not hold it exactly. */
const LONG_INTEGER = /\d{16,}/;

/**
 * Parses an upstream JSON body. Numbers a double cannot hold exactly are rare in upstream replies; when the
 * text holds one, the slower lossless parser keeps its digits, so that we serve what the upstream sent.
 */
export function parseUpstreamJson(
  name: string,
  text: string,
): { value: unknown; serialize(part: unknown): string } {
  try {
    if (!LONG_INTEGER.test(text))
      return { value: JSON.parse(text), serialize: guarded(name, (part) => JSON.stringify(part)) };
    return { value: parse(text), serialize: guarded(name, (part) => stringify(part) ?? 'null') };
  } catch {
    throw new UpstreamFailure('bad_gateway', `${name} answered with something that is not JSON`);
  }
}

/**
 * Writing a part back out recurses once per level of nesting, where parsing does not: a value nested some
 * thousands deep parses and then overflows the stack as it is written. That is the upstream's answer
 * being unusable (502), as text that is not JSON is, not the service failing.
 */
const guarded =
  (name: string, serialize: (part: unknown) => string) =>
  (part: unknown): string => {
    try {
      return serialize(part);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      throw new UpstreamFailure('bad_gateway', `${name} answered with JSON nested too deeply to serve`);
    }
  };

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
