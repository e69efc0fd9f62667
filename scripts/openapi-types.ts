// The client's generated types (clients/typescript/src/schema.ts), made from the OpenAPI document the service
// builds in process: no server, no database beyond an in-memory SQLite, the default configuration (so the
// descriptions the types carry do not depend on who runs it). `npm run client:types` writes the file;
// test/clients/client-types.test.ts fails when the committed file is not what this makes.
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

export const CLIENT_TYPES_PATH = 'clients/typescript/src/schema.ts';

/** The service's OpenAPI document, as `GET /openapi.json` serves it with the default configuration. */
export async function serviceDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    JWT_SECRET: 'client-types-generation-secret-32-bytes!',
    LOG_LEVEL: 'silent',
  });
  const app = await buildApp({ config });
  try {
    await app.ready();
    const reply = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (reply.statusCode !== 200) throw new Error(`GET /openapi.json answered ${reply.statusCode}`);
    return JSON.parse(reply.body);
  } finally {
    await app.close();
  }
}

const STRING = ts.factory.createKeywordTypeNode(ts.SyntaxKind.StringKeyword);
const NULL = ts.factory.createLiteralTypeNode(ts.factory.createNull());

const HEADER = `/**
 * Generated from the Player Data Service's OpenAPI document by \`npm run client:types\`
 * (scripts/openapi-types.ts, openapi-typescript). Do not edit: \`npm test\` fails when this file is not
 * what the document makes.
 *
 * 64-bit IDs (\`format: uint64\`) are typed as strings: the client parses answers with a JSON parser that
 * keeps big integers and hands IDs over as their exact decimal digits.
 */

`;

/** The names of the properties the document declares `format: uint64` (the IDs the client reads as text). */
function uint64Properties(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const inner of node) uint64Properties(inner, found);
  else if (typeof node === 'object' && node !== null) {
    for (const [name, inner] of Object.entries(node)) {
      if (name === 'properties' && typeof inner === 'object' && inner !== null) {
        for (const [property, schema] of Object.entries(inner)) {
          if ((schema as { format?: unknown } | null)?.format === 'uint64') found.add(property);
        }
      }
      uint64Properties(inner, found);
    }
  }
  return found;
}

/** The text of clients/typescript/src/schema.ts for a document. */
export async function clientTypes(document: Record<string, unknown>): Promise<string> {
  const ast = await openapiTS(structuredClone(document) as unknown as Parameters<typeof openapiTS>[0], {
    transform(schema) {
      if (schema.format !== 'uint64') return undefined;
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      return types.includes('null') ? ts.factory.createUnionTypeNode([STRING, NULL]) : STRING;
    },
  });
  const ids = [...uint64Properties(document)].sort();
  return (
    HEADER +
    astToString(ast) +
    '\n/** The properties the document declares `format: uint64`: the client reads their values as exact decimal text. */\n' +
    `export const uint64Properties: readonly string[] = ${JSON.stringify(ids)};\n`
  );
}
