/** Whether the tests run from the test build (plain JavaScript, see scripts/build-tests.mjs). */
const fromTestBuild = import.meta.url.includes('/.test-build/');

/**
 * The arguments to `node` that run one of the project's modules (a path from the project's root, `.ts`)
 * as the tests themselves run: from the test build when they do, through tsx otherwise.
 */
export function nodeArgs(modulePath: string): string[] {
  return fromTestBuild
    ? ['--enable-source-maps', `.test-build/${modulePath.replace(/\.ts$/, '.js')}`]
    : ['--import', 'tsx', modulePath];
}
