import type { CatalogedSetting } from '../../libs/common/src/config/settings-catalog';
import { SETTINGS_CATALOG } from '../../libs/common/src/config/settings-catalog';

// The text of docs/operations/configuration.md: the prose below around the tables rendered from
// SETTINGS_CATALOG. scripts/write-configuration-docs.ts writes it; test/docs/configuration-reference.spec.ts
// keeps the committed page equal to it.

const INTRO = `# Configuration

Every setting of every process, as environment variables: the all-in-one service (\`npm start\`)
and the distributed deployment's processes ([deployment.md](deployment.md)) read the same names;
a setting a process has no use for is ignored by it.
`;

const AFTER_SERVICE_TABLE = `With no model configured a task still gets an id, then fails with a \`done\` event whose error
names the variables to set.
`;

const CLI_SECTION = `## The \`ats\` command line

The command-line client ([From the terminal](../guide/cli.md)) reads its own:
`;

function table(settings: readonly CatalogedSetting[]): string {
  const rows = settings.map(
    ({ names, meaning, defaults }) => `| ${names.map((name) => `\`${name}\``).join(', ')} | ${meaning} | ${defaults.join(', ')} |`,
  );
  return ['| variable | meaning | default |', '|---|---|---|', ...rows].join('\n') + '\n';
}

export function configurationPage(catalog: readonly CatalogedSetting[] = SETTINGS_CATALOG): string {
  const services = catalog.filter((setting) => setting.group !== 'cli');
  const cli = catalog.filter((setting) => setting.group === 'cli');
  return [INTRO, table(services), AFTER_SERVICE_TABLE, CLI_SECTION, table(cli)].join('\n');
}
