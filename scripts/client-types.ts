// `npm run client:types`: regenerates clients/typescript/src/schema.ts from the service's OpenAPI document.
import { writeFileSync } from 'node:fs';
import { CLIENT_TYPES_PATH, clientTypes, serviceDocument } from './openapi-types.js';

writeFileSync(CLIENT_TYPES_PATH, await clientTypes(await serviceDocument()));
console.log(`wrote ${CLIENT_TYPES_PATH}`);
