import { AtsClient } from '@agentic-task-service/client';
import { plainHttpWarning } from './plain-http-warning';
import { resolveSettings } from './settings';
import { Terminal } from './terminal';

/** What every command works with: the terminal, and a client configured on first use (login needs none). */
export interface CliContext {
  readonly term: Terminal;
  client(): Promise<AtsClient>;
}

export function processContext(): CliContext {
  const term = Terminal.fromProcess();
  return {
    term,
    async client() {
      const { url, apiKey } = await resolveSettings();
      const warning = plainHttpWarning(url);
      if (warning) term.error(warning);
      return new AtsClient({ baseUrl: url, apiKey });
    },
  };
}
