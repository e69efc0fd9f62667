import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type IReporterOutput } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import ts from 'typescript';

const FIXTURE = fileURLToPath(new URL('./fixtures/layering/', import.meta.url));
/** The project's root: where src/ is (this file runs from test/, or from .test-build/test/ beside it). */
const ROOT = fileURLToPath(
  new URL(import.meta.url.includes('/.test-build/') ? '../../' : '../', import.meta.url),
);
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
      'one-place-writes-challenges: src/modules/c/c.routes.ts -> src/platform/http/auth-challenge.ts',
      'only-repositories-see-tables: src/modules/b/b.service.ts -> src/platform/db/repository-view.ts',
      'platform-is-the-ground: src/platform/upward.ts -> src/modules/a/a.service.ts',
      'repositories-know-no-http: src/modules/b/b.repository.ts -> fastify',
      'routes-shape-http-only: src/modules/b/b.routes.ts -> kysely',
      'routes-say-where-input-was: src/modules/c/c.service.ts -> src/platform/http/input-errors.ts',
      'routes-shape-http-only: src/modules/b/b.routes.ts -> src/modules/b/b.repository.ts',
      'services-know-no-http: src/modules/a/a.service.ts -> fastify',
      'services-know-no-http: src/modules/c/c.service.ts -> src/platform/http/input-errors.ts',
      'sql-in-repositories: src/modules/b/b.routes.ts -> kysely',
      'tables-are-their-repositories-own: src/modules/b/b.service.ts -> src/modules/b/b.tables.ts',
      'upstream-clients-know-no-http-server: src/upstream/client.ts -> fastify',
      'upstream-clients-know-no-http-server: src/upstream/client.ts -> src/platform/http/input-errors.ts',
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

/** The request parts an answer names a field under (`body/samples/3/at`): a service never names one. */
const POINTER = /^(body|query|params|headers)\//;
/** The options of an AppError that shape the HTTP answer, which the HTTP layer and the routes give. */
const HTTP_OPTIONS = new Set(['cause', 'status', 'headers']);

function serviceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return serviceFiles(path);
    return entry.name.endsWith('.service.ts') ? [path] : [];
  });
}

/** Whether `node` makes an AppError (or a subclass): `new AppError(...)`, `new InputError(...)`, `AppError.of(...)`. */
function makesAppError(node: ts.Node): node is ts.NewExpression | ts.CallExpression {
  if (ts.isNewExpression(node))
    return ts.isIdentifier(node.expression) && /Error$/.test(node.expression.text);
  return (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    ts.isIdentifier(node.expression.expression) &&
    /Error$/.test(node.expression.expression.text) &&
    node.expression.name.text === 'of'
  );
}

/**
 * What the import rules cannot see, as `services-shape-no-answers: <file> -> <what>`: a service that shapes
 * an HTTP answer by itself, with no import to give it away. It gives an AppError a `cause`, `status` or
 * `headers`; it writes a request part's pointer (`body/...`, `query/...`); it names `WWW-Authenticate`. The
 * services under `root`/src/modules are read as syntax (TypeScript's parser): a guard against the plain
 * ways back, not a proof (options passed through a variable go unseen).
 */
function httpShapingInServices(root: string): string[] {
  const found: string[] = [];
  for (const file of serviceFiles(join(root, 'src', 'modules'))) {
    const name = relative(root, file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const report = (what: string) => found.push(`services-shape-no-answers: ${name} -> ${what}`);
    const visit = (node: ts.Node): void => {
      if (makesAppError(node)) {
        for (const argument of node.arguments ?? []) {
          if (!ts.isObjectLiteralExpression(argument)) continue;
          for (const property of argument.properties) {
            const key = property.name && ts.isIdentifier(property.name) ? property.name.text : undefined;
            if (key && HTTP_OPTIONS.has(key)) report(`option ${key}`);
          }
        }
      }
      const text = ts.isStringLiteralLike(node) || ts.isTemplateHead(node) ? node.text : undefined;
      if (text !== undefined && POINTER.test(text)) report(`pointer "${text}"`);
      if (text !== undefined && text.toLowerCase() === 'www-authenticate') report(`header "${text}"`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort();
}

describe('what the import rules cannot express: services shape no HTTP answer (read as syntax)', () => {
  it('finds each way a service could shape an answer, and lets domain data through', () => {
    assert.deepEqual(httpShapingInServices(FIXTURE), [
      'services-shape-no-answers: src/modules/c/c.service.ts -> header "WWW-Authenticate"',
      'services-shape-no-answers: src/modules/c/c.service.ts -> option cause',
      'services-shape-no-answers: src/modules/c/c.service.ts -> option headers',
      'services-shape-no-answers: src/modules/c/c.service.ts -> option status',
      'services-shape-no-answers: src/modules/c/c.service.ts -> pointer "body/name is too long"',
      'services-shape-no-answers: src/modules/c/c.service.ts -> pointer "query/"',
    ]);
  });

  it("holds in the service's own modules", () => {
    assert.ok(
      serviceFiles(join(ROOT, 'src', 'modules')).length > 10,
      `the services under ${ROOT}src/modules`,
    );
    assert.deepEqual(httpShapingInServices(ROOT), []);
  });
});
