// A test file for backends.test.ts to run in a child `node --test`: one test, declared on every backend.
import { it } from 'node:test';
import { describeEachBackend } from './backends.js';

describeEachBackend(
  'a sample suite',
  () => {
    it('runs', () => undefined);
  },
  { caches: true },
);
