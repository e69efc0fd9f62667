import { readFileSync } from 'node:fs';

/** The package's version (package.json sits two levels up from both src/cli/ and dist/cli/). */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
