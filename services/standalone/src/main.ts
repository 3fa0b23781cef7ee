import 'reflect-metadata';
import { shutdownTimeoutMsFromEnv } from '@app/common';
import { closeOnShutdownSignals } from '@app/runtime';
import { startStandalone } from './bootstrap';

async function main(): Promise<void> {
  const timeoutMs = shutdownTimeoutMsFromEnv(process.env);
  const { app } = await startStandalone();
  closeOnShutdownSignals(app, { name: 'Standalone', timeoutMs, closeFirst: () => app.getHttpAdapter().close() });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
