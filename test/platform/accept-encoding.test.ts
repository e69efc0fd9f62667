import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { preferredEncoding } from '../../src/platform/compression.js';

describe('Accept-Encoding', () => {
  const cases: [string | undefined, 'br' | 'gzip' | undefined][] = [
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0.5, gzip;q=0.5', 'br'],
    // A coding's own entry counts before the wildcard, which speaks for the codings not listed.
    ['br;q=0, *', 'gzip'],
    ['*, br;q=0', 'gzip'],
    ['br;q=0, gzip;q=0, *;q=1', undefined],
    ['*', 'br'],
    ['*;q=0', undefined],
    ['gzip;q=0.2, *;q=0.5', 'br'],
    // Codings are case-insensitive; x-gzip is gzip.
    ['GZIP', 'gzip'],
    ['BR', 'br'],
    ['x-gzip', 'gzip'],
    [' br ; Q=0.8 , gzip ; q=0.9 ', 'gzip'],
    // A malformed q is ignored (that entry alone), never read as acceptance.
    ['br;q=2', undefined],
    ['br;q=abc, gzip', 'gzip'],
    ['br;q=0.0001', undefined],
    ['br;q=1.000', 'br'],
    [',,;,', undefined],
    // Listed twice: the lower weight (a repeat never cancels a refusal).
    ['br;q=0, br', undefined],
    ['br, br;q=0, gzip', 'gzip'],
    ['br;q=0.5, br;q=0.8, gzip;q=0.6', 'gzip'],
  ];
  for (const [header, expected] of cases) {
    it(`${JSON.stringify(header)} -> ${expected ?? 'identity'}`, () => {
      assert.equal(preferredEncoding(header), expected);
    });
  }

  it('reads a header of many entries (16 KB) as any other', () => {
    const header = `${'a;q=0.1, '.repeat(1800)}gzip`;
    assert.equal(preferredEncoding(header), 'gzip');
  });
});
