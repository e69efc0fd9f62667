import { readFileSync } from 'node:fs';

/** The fixtures' parsed content, to compare what the service serves with what the upstream sent. */
export const fixtureJson = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/hypixel/${name}`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
