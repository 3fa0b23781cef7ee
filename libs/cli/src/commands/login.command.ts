import { AtsClient } from '@agentic-task-service/client';
import { text } from 'node:stream/consumers';
import type { CliContext } from '../context';
import { CliExit, ExitCode } from '../exit-codes';
import { askSecret, askText } from '../prompts';
import { plainHttpWarning } from '../plain-http-warning';
import { DEFAULT_URL, readStoredSettings, storeSettings } from '../settings';
import { safeLine } from '../untrusted-text';

/**
 * `ats login [--url URL]`: asks for the key without echo (a terminal) or reads it from
 * ATS_API_KEY or stdin (a script), checks it against the service, then stores URL and key in the
 * user's config folder, readable by the user only. The key is never printed.
 */
export async function loginCommand(ctx: CliContext, options: { url?: string }): Promise<ExitCode> {
  const { term } = ctx;
  const stored = await readStoredSettings();
  let url = options.url ?? process.env.ATS_URL ?? stored.url ?? DEFAULT_URL;
  if (!options.url && term.interactive) {
    const typed = await askText('Service URL', url);
    if (typed === undefined) return ExitCode.interrupted;
    url = typed;
  }
  const apiKey = process.env.ATS_API_KEY || (term.interactive ? await askSecret('API key', 'API key') : await keyFromStdin());
  if (apiKey === undefined) return ExitCode.interrupted;
  if (!apiKey) throw new CliExit(ExitCode.failed, 'ats: no API key given');
  const warning = plainHttpWarning(url);
  if (warning) term.error(warning);
  // The key is stored only once the service accepts it.
  await new AtsClient({ baseUrl: url, apiKey }).tasks.listPage({ limit: 1 });
  const file = await storeSettings({ url, apiKey });
  term.line(`Logged in to ${safeLine(url)}; saved to ${file} (mode 0600)`);
  return ExitCode.ok;
}

/** The key piped in. A terminal on stdin (only stdout piped) would echo it as typed: refused. */
async function keyFromStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    throw new CliExit(
      ExitCode.failed,
      'ats: login asks for the key only when stdin and stdout are a terminal; else pipe it in or set ATS_API_KEY',
    );
  }
  return (await text(process.stdin)).trim();
}
