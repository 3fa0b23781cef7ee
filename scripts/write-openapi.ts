import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument, openApiFileText } from '../test/docs/openapi-document';

// Writes the OpenAPI document the service serves at /api/docs-json to docs/openapi.json, the file
// CI lints (redocly.yaml) and test/docs/openapi-file.spec.ts keeps equal to the code.

const FILE = join(__dirname, '..', 'docs', 'openapi.json');

void openApiDocument().then((document) => {
  writeFileSync(FILE, openApiFileText(document));
  console.log(`wrote ${FILE}`);
});
