import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument, openApiFileText } from './openapi-document';

// docs/openapi.json is the OpenAPI document CI lints and readers open without a running service:
// it must be exactly what the code generates (and /api/docs-json serves).

describe('docs/openapi.json', () => {
  it('is the document the code generates', async () => {
    const committed = readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8');
    const generated = openApiFileText(await openApiDocument());
    if (committed !== generated) throw new Error('docs/openapi.json differs from the document the code generates: run `npm run openapi`');
  });
});
