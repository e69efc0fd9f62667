/*
 * JSON Pointers (RFC 6901): `/stats/Bedwars/wins_bedwars` names a value inside a JSON document, one
 * reference token per `/`, with `~1` for a `/` inside a key and `~0` for a `~`. The empty pointer is the
 * whole document.
 */

/** A pointer's reference tokens, unescaped: `/a~1b/c` is `['a/b', 'c']`. */
export type PointerPath = readonly string[];

/** A key as one reference token of a pointer: `~` as `~0`, `/` as `~1`. */
export const escapePointer = (key: string): string =>
  key.includes('~') || key.includes('/') ? key.replaceAll('~', '~0').replaceAll('/', '~1') : key;

/** A reference token's key: the inverse of `escapePointer` (a `~` not followed by 0 or 1 is kept as it is). */
export const unescapePointer = (token: string): string => token.replaceAll('~1', '/').replaceAll('~0', '~');

/** A reference token, unescaped, or undefined when it holds a `~` not followed by 0 or 1. */
function unescapeToken(token: string): string | undefined {
  if (!token.includes('~')) return token;
  if (/~(?![01])/.test(token)) return undefined;
  return unescapePointer(token);
}

/** The tokens of a pointer, or undefined when it is not one (it must be empty or start with `/`). */
export function parsePointer(pointer: string): PointerPath | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens: string[] = [];
  for (const token of pointer.slice(1).split('/')) {
    const unescaped = unescapeToken(token);
    if (unescaped === undefined) return undefined;
    tokens.push(unescaped);
  }
  return tokens;
}

/** The pointer text of tokens: the inverse of `parsePointer`. */
export function formatPointer(path: PointerPath): string {
  return path.map((token) => `/${escapePointer(token)}`).join('');
}

/** An array index token as RFC 6901 allows it (`0`, or digits without a leading zero), as a number. */
export function arrayIndexOf(token: string): number | undefined {
  return /^(0|[1-9]\d{0,8})$/.test(token) ? Number(token) : undefined;
}

/** The value a token names in a container: an object's own member, or an array's element. */
export function childOf(container: unknown, token: string): unknown {
  if (Array.isArray(container)) {
    const index = arrayIndexOf(token);
    return index === undefined ? undefined : container[index];
  }
  if (typeof container === 'object' && container !== null && Object.hasOwn(container, token)) {
    return (container as Record<string, unknown>)[token];
  }
  return undefined;
}

/** The value at `path` in `document`, or undefined when there is none. */
export function valueAtPath(document: unknown, path: PointerPath, from = 0): unknown {
  let value = document;
  for (let index = from; index < path.length && value !== undefined; index++) {
    value = childOf(value, path[index] as string);
  }
  return value;
}
