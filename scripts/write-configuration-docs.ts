import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationPage } from '../test/docs/configuration-page';

// Writes docs/operations/configuration.md from the settings catalog (libs/common/src/config/settings-catalog.ts),
// the page test/docs/configuration-reference.spec.ts keeps equal to it.

const FILE = join(__dirname, '..', 'docs', 'operations', 'configuration.md');

writeFileSync(FILE, configurationPage());
console.log(`wrote ${FILE}`);
