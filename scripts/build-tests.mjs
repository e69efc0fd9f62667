// Transpiles src/ and test/ (and the TypeScript client with the script that makes its types, which its
// tests import) into .test-build/ (esbuild: types are not checked here, `npm run typecheck`
// does that), so that each test process loads plain JavaScript instead of compiling TypeScript through a
// loader hook on every import: that hook, not the tests, was most of the suites' time. Test fixtures and
// the files tests read beside themselves are copied along. The output is wiped first: a deleted test
// must not keep running from an old build.
import { cpSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

const OUT = '.test-build';

function typescriptFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (path === join('test', 'fixtures')) return [];
    if (statSync(path).isDirectory()) return typescriptFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

rmSync(OUT, { recursive: true, force: true });
buildSync({
  entryPoints: [
    ...typescriptFiles('src'),
    ...typescriptFiles('test'),
    ...typescriptFiles(join('clients', 'typescript', 'src')),
    join('scripts', 'openapi-types.ts'),
  ],
  outdir: OUT,
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'inline',
  logLevel: 'warning',
});
cpSync(join('test', 'fixtures'), join(OUT, 'test', 'fixtures'), { recursive: true });
cpSync('.dependency-cruiser.cjs', join(OUT, '.dependency-cruiser.cjs'));

// The suites run as a few bundles, each one process importing its share of the test files, rather than a
// process per file: loading the service's modules costs a process about a second of CPU, as much as many
// of the files' tests. Files are dealt to the bundles largest first, each to the lightest bundle so far, so
// that the bundles take about as long. `npm run test:suites` runs the bundles side by side; a file can still
// be run on its own from .test-build/test/.
const BUNDLES = Number(process.env.TEST_BUNDLES ?? 2);
const tests = typescriptFiles('test')
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => ({ path: path.replace(/\.ts$/, '.js'), size: statSync(path).size }))
  .sort((a, b) => b.size - a.size || a.path.localeCompare(b.path));
const bundles = Array.from({ length: BUNDLES }, () => ({ size: 0, paths: [] }));
for (const test of tests) {
  const lightest = bundles.reduce((least, bundle) => (bundle.size < least.size ? bundle : least));
  lightest.size += test.size;
  lightest.paths.push(test.path);
}
mkdirSync(join(OUT, 'bundles'));
bundles.forEach((bundle, index) => {
  const imports = bundle.paths.sort().map((path) => `import '../${path.split('\\').join('/')}';`);
  writeFileSync(join(OUT, 'bundles', `bundle-${index + 1}.test.js`), `${imports.join('\n')}\n`);
});
