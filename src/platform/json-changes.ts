import { LongInteger } from './json.js';
import { arrayIndexOf, escapePointer, type PointerPath, parsePointer, valueAtPath } from './json-pointer.js';

/*
 * The changes that turn one JSON document into another, as a list of pointers and values: a compact way to
 * keep many versions of a document that differ a little (a player's snapshots). Arrays are compared element
 * by element, so an array that grew by one element costs one change, not the whole array again.
 */

/** Sets the value at the pointer (`[pointer, value]`), or removes it (`[pointer]`). */
export type JsonChange = readonly [pointer: string, value: unknown] | readonly [pointer: string];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof LongInteger);

/** Whether two JSON leaves (neither an object nor an array) are equal. */
function sameLeaf(a: unknown, b: unknown): boolean {
  if (a instanceof LongInteger || b instanceof LongInteger) {
    return a instanceof LongInteger && b instanceof LongInteger && a.digits === b.digits;
  }
  return a === b;
}

/**
 * The changes from `base` to `next`, in an order `applyChanges` replays: a member or element added or
 * replaced is set, one gone is removed (an array's from its last element down). Equal documents: none.
 */
export function diffJson(base: unknown, next: unknown): JsonChange[] {
  const changes: JsonChange[] = [];
  const walk = (a: unknown, b: unknown, pointer: string) => {
    if (isObject(a) && isObject(b)) {
      for (const key of Object.keys(b)) {
        const at = `${pointer}/${escapePointer(key)}`;
        if (Object.hasOwn(a, key)) walk(a[key], b[key], at);
        else changes.push([at, b[key]]);
      }
      for (const key of Object.keys(a)) {
        if (!Object.hasOwn(b, key)) changes.push([`${pointer}/${escapePointer(key)}`]);
      }
    } else if (Array.isArray(a) && Array.isArray(b)) {
      const shared = Math.min(a.length, b.length);
      for (let index = 0; index < shared; index++) walk(a[index], b[index], `${pointer}/${index}`);
      for (let index = shared; index < b.length; index++) changes.push([`${pointer}/${index}`, b[index]]);
      for (let index = a.length - 1; index >= b.length; index--) changes.push([`${pointer}/${index}`]);
    } else if (isObject(a) || isObject(b) || Array.isArray(a) || Array.isArray(b) || !sameLeaf(a, b)) {
      changes.push([pointer, b]);
    }
  };
  walk(base, next, '');
  return changes;
}

const REMOVED = Symbol('removed');

/** Defines a member on a copy (never through a setter: a key named `__proto__` is a member like any other). */
function withMember(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = { ...object };
  if (value === REMOVED) delete copy[key];
  else Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/**
 * `document` with the value at `path` (from `depth` on) set or removed, copying only the containers on the
 * way (the others are shared, never written to). A path through a value that is not a container, or to an
 * element beyond an array's end, leaves the document as it is.
 */
function changedAt(document: unknown, path: PointerPath, depth: number, value: unknown): unknown {
  if (depth === path.length) return value;
  const token = path[depth] as string;
  const last = depth === path.length - 1;
  if (Array.isArray(document)) {
    const index = arrayIndexOf(token);
    if (index === undefined || index > document.length || (index === document.length && !last))
      return document;
    const copy = document.slice();
    const child = changedAt(document[index], path, depth + 1, value);
    if (child === REMOVED) copy.splice(index, 1);
    else copy[index] = child;
    return copy;
  }
  if (isObject(document)) {
    if (!last && !Object.hasOwn(document, token)) return document;
    return withMember(document, token, changedAt(document[token], path, depth + 1, value));
  }
  return document;
}

/** The changes with their pointers parsed once (a stored diff read for many fields). */
export interface ParsedChanges {
  readonly changes: readonly { readonly path: PointerPath; readonly value: unknown }[];
}

/** Reads stored changes; a pointer that is not one is skipped. */
export function parseChanges(changes: readonly JsonChange[]): ParsedChanges {
  const parsed: { path: PointerPath; value: unknown }[] = [];
  for (const change of changes) {
    const path = parsePointer(change[0]);
    if (path) parsed.push({ path, value: change.length === 2 ? change[1] : REMOVED });
  }
  return { changes: parsed };
}

const startsWith = (path: PointerPath, prefix: PointerPath) =>
  prefix.length <= path.length && prefix.every((token, index) => path[index] === token);

/**
 * The value at `path` in `base` with `changes` applied, or undefined when there is none: reads only what
 * the path covers, and copies only what a change under it touches (the base is never written to).
 */
export function valueAfterChanges(base: unknown, { changes }: ParsedChanges, path: PointerPath): unknown {
  let value = valueAtPath(base, path);
  for (const change of changes) {
    if (startsWith(path, change.path)) {
      value = change.value === REMOVED ? undefined : valueAtPath(change.value, path, change.path.length);
    } else if (startsWith(change.path, path) && value !== undefined) {
      const changed = changedAt(value, change.path, path.length, change.value);
      value = changed === REMOVED ? undefined : changed;
    }
  }
  return value;
}

/** `base` with `changes` applied: the document `diffJson(base, next)` was made from `next` of. */
export function applyChanges(base: unknown, changes: readonly JsonChange[]): unknown {
  return valueAfterChanges(base, parseChanges(changes), []);
}
