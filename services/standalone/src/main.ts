import { startStandalone } from './bootstrap';

startStandalone().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
