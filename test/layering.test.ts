import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type IReporterOutput } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const FIXTURE = fileURLToPath(new URL('./fixtures/layering/', import.meta.url));
const config = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as {
  forbidden: NonNullable<ICruiseOptions['ruleSet']>['forbidden'];
  options: ICruiseOptions;
};

/** The violations of the project's rules in the fixture tree, as `rule: from -> to`. */
async function violationsOfFixture(): Promise<string[]> {
  const result: IReporterOutput = await cruise(
    ['src'],
    { ...config.options, baseDir: FIXTURE, ruleSet: { forbidden: config.forbidden }, validate: true },
    undefined,
    { tsConfig: extractTSConfig(`${FIXTURE}tsconfig.json`) },
  );
  if (typeof result.output === 'string') throw new Error('expected the cruise result, not a report');
  // A package is named by its name, not by the path of the file it resolved to.
  const named = (path: string) => path.replace(/^.*node_modules\/([^/]+)\/.*$/, '$1');
  return result.output.summary.violations
    .map((violation) => `${violation.rule.name}: ${violation.from} -> ${named(violation.to)}`)
    .sort();
}

let cruised: Promise<string[]> | undefined;
const fixtureViolations = () => {
  cruised ??= violationsOfFixture();
  return cruised;
};

describe('layering rules (.dependency-cruiser.cjs)', () => {
  it('each catches the import it forbids, and lets the allowed ones through', async () => {
    const found = await fixtureViolations();
    const expected = [
      'module-files-have-a-role: src/modules/b/helper.ts -> fastify',
      'modules-below-the-root: src/modules/a/a.service.ts -> src/cli/run.ts',
      'modules-below-the-root: src/modules/a/a.service.ts -> src/config.ts',
      'modules-meet-through-services: src/modules/a/a.service.ts -> src/modules/b/b.repository.ts',
      'no-dev-dependencies-in-src: src/platform/upward.ts -> fast-check',
      'not-to-unresolvable: src/platform/upward.ts -> ./nowhere.js',
      'only-repositories-see-tables: src/modules/b/b.service.ts -> src/platform/db/repository-view.ts',
      'platform-is-the-ground: src/platform/upward.ts -> src/modules/a/a.service.ts',
      'repositories-know-no-http: src/modules/b/b.repository.ts -> fastify',
      'routes-shape-http-only: src/modules/b/b.routes.ts -> kysely',
      'routes-shape-http-only: src/modules/b/b.routes.ts -> src/modules/b/b.repository.ts',
      'services-know-no-http: src/modules/a/a.service.ts -> fastify',
      'sql-in-repositories: src/modules/b/b.routes.ts -> kysely',
      'tables-are-their-repositories-own: src/modules/b/b.service.ts -> src/modules/b/b.tables.ts',
      'upstream-clients-know-no-http-server: src/upstream/client.ts -> fastify',
      'upstream-stands-on-platform: src/upstream/client.ts -> src/modules/b/b.service.ts',
    ];
    for (const violation of expected) assert.ok(found.includes(violation), `not caught: ${violation}`);
    assert.ok(
      found.some((violation) => violation.startsWith('no-circular: ')),
      'the a.service <-> b.service cycle is caught',
    );
    const unexpected = found.filter(
      (violation) => !expected.includes(violation) && !violation.startsWith('no-circular: '),
    );
    assert.deepEqual(unexpected, [], 'allowed imports stay allowed');
  });

  it('has a case in the fixture tree for every rule (a rule nobody saw fail may never fail)', async () => {
    const found = await fixtureViolations();
    for (const rule of config.forbidden ?? []) {
      assert.ok(
        found.some((violation) => violation.startsWith(`${rule.name}: `)),
        `no case breaks ${rule.name}`,
      );
    }
  });
});
