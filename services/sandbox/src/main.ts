import 'reflect-metadata';
import { startWorkerService } from '@app/runtime';
import { SandboxModule } from './sandbox.module';

// The sandbox service as its own process (distributed mode): `npm run start:sandbox`.
startWorkerService('sandbox', SandboxModule).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
