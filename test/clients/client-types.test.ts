import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { CLIENT_TYPES_PATH, clientTypes, serviceDocument } from '../../scripts/openapi-types.js';

it("the TypeScript client's generated types are what the OpenAPI document makes (npm run client:types)", async () => {
  const committed = await readFile(CLIENT_TYPES_PATH, 'utf8');
  const generated = await clientTypes(await serviceDocument());
  assert.ok(
    committed === generated,
    `${CLIENT_TYPES_PATH} differs from what the OpenAPI document makes: run \`npm run client:types\` and commit it`,
  );
});
