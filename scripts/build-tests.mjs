// Transpiles src/ and test/ into .test-build/ (esbuild: types are not checked here, `npm run typecheck`
// does that), so that each test process loads plain JavaScript instead of compiling TypeScript through a
// loader hook on every import: that hook, not the tests, was most of the suites' time. Test fixtures and
// the files tests read beside themselves are copied along. The output is wiped first: a deleted test
// must not keep running from an old build.
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
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
  entryPoints: [...typescriptFiles('src'), ...typescriptFiles('test')],
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
