import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { API_KEY } from './service-harness';

/**
 * Debian's chromium (infra/dev/ensure-chromium.sh installs it), driven by playwright-core: no
 * browser is downloaded. The flags keep it from reaching any network of its own.
 */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });

/** The console's build, rebuilt when its sources are newer (scripts/build-console.js). */
export function buildConsole(): void {
  execFileSync(process.execPath, [join(__dirname, '../../scripts/build-console.js')], { stdio: 'inherit' });
}

/** What the page did that it must not: script an attacker planted, or anything the CSP blocked. */
export interface PageWatch {
  /** `window.__xss` as the page sees it (set only by injected script). */
  xssFlag(): Promise<unknown>;
  /** Content-Security-Policy violations reported in the page, e.g. an inline handler refused. */
  violations(): Promise<string[]>;
  /** Script errors and console errors other than failed requests. */
  readonly consoleErrors: string[];
}

/** Listens for CSP violations from the first script on, before the console's own runs. */
export async function watchPage(context: BrowserContext, page: Page): Promise<PageWatch> {
  // Strings, not functions: they run in the page, whose globals this Node-typed file does not declare.
  await context.addInitScript(`
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(event.violatedDirective + ' ' + event.blockedURI));
  `);
  const consoleErrors: string[] = [];
  // A refused request (the wrong key's 401, the favicon's 404) is logged as an error too: not the page's fault.
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  return {
    xssFlag: () => page.evaluate('window.__xss'),
    violations: () => page.evaluate<string[]>('window.__violations'),
    consoleErrors,
  };
}

/** Opens the console and signs in with the test tenant's key. */
export async function signIn(page: Page, url: string, apiKey = API_KEY): Promise<void> {
  await page.goto(`${url}/console`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Tasks' }).waitFor();
}
