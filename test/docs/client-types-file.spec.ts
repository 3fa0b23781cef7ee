import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// libs/client's generated types are docs/openapi.json's: `npm run openapi` writes both, and this
// fails when the committed types and the document have drifted apart.

it('libs/client/src/generated/openapi.ts is what openapi-typescript makes of docs/openapi.json', () => {
  const client = join(__dirname, '..', '..', 'libs', 'client');
  const check = spawnSync('npm', ['run', '--silent', 'generate', '--', '--check'], { cwd: client, encoding: 'utf8', timeout: 60_000 });
  expect({ status: check.status, stderr: check.stderr.trim() }).toEqual({ status: 0, stderr: '' });
});
