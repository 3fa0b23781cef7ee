import 'reflect-metadata';
import { startWorkerService } from '@app/runtime';
import { OrchestratorModule } from './orchestrator.module';

// The orchestrator service as its own process (distributed mode): `npm run start:orchestrator`.
startWorkerService('orchestrator', OrchestratorModule).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
