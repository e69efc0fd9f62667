import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LongInteger, parseJsonExact, stringifyExact } from '../../src/platform/json.js';
import { applyChanges, diffJson, parseChanges, valueAfterChanges } from '../../src/platform/json-changes.js';
import { formatPointer, parsePointer, valueAtPath } from '../../src/platform/json-pointer.js';

/** JSON documents, with the keys that need escaping in a pointer and a `__proto__` member among them. */
const key = fc.constantFrom('a', 'b', 'a/b', 'm~n', '__proto__', '0', '', 'stats');
const documents = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.bigInt({ min: 2n ** 60n, max: 2n ** 80n }).map((big) => new LongInteger(big.toString())),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** A document as it round-trips through its stored text (a `-0` is `0`, a `__proto__` an own member). */
const stored = (value: unknown) => parseJsonExact(stringifyExact(value));
/** A document's text with every object's keys sorted: the changes keep values, not the order of members. */
function canonical(value: unknown): string {
  const sorted = (inner: unknown): unknown => {
    if (Array.isArray(inner)) return inner.map(sorted);
    if (typeof inner !== 'object' || inner === null || inner instanceof LongInteger) return inner;
    const entries = Object.keys(inner)
      .sort()
      .map((name) => [name, sorted((inner as Record<string, unknown>)[name])] as const);
    const copy: Record<string, unknown> = {};
    for (const [name, member] of entries) {
      Object.defineProperty(copy, name, {
        value: member,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  };
  return stringifyExact(sorted(value));
}

/** The paths of every value in a document. */
function pathsOf(document: unknown, prefix: string[] = []): string[][] {
  const inner =
    typeof document === 'object' && document !== null && !(document instanceof LongInteger)
      ? Object.keys(document).flatMap((name) =>
          pathsOf((document as Record<string, unknown>)[name], [...prefix, name]),
        )
      : [];
  return [prefix, ...inner];
}

describe('json changes (property)', () => {
  it('replays to the document they were made from, through their stored text, and are empty for equal ones', () => {
    fc.assert(
      fc.property(documents, documents, (a, b) => {
        const [base, next] = [stored(a), stored(b)];
        const changes = stored(diffJson(base, next)) as ReturnType<typeof diffJson>;
        assert.equal(canonical(applyChanges(base, changes)), canonical(next));
        assert.deepEqual(diffJson(next, stored(b)), []);
        assert.equal(stringifyExact(base), stringifyExact(stored(a)), 'the base is never written to');
      }),
      { numRuns: 500 },
    );
  });

  it('read at a pointer, give what the replayed document holds there (and undefined where it holds nothing)', () => {
    fc.assert(
      fc.property(documents, documents, (a, b) => {
        const [base, next] = [stored(a), stored(b)];
        const parsed = parseChanges(diffJson(base, next));
        for (const path of [...pathsOf(next), ...pathsOf(base), ['missing', 'deeper']]) {
          const pointer = formatPointer(path);
          assert.deepEqual(parsePointer(pointer), path);
          assert.equal(
            canonical(valueAfterChanges(base, parsed, path) ?? 'absent'),
            canonical(valueAtPath(next, path) ?? 'absent'),
            pointer,
          );
        }
      }),
      { numRuns: 300 },
    );
  });
});
