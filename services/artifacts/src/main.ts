import 'reflect-metadata';
import { startWorkerService } from '@app/runtime';
import { ArtifactsModule } from './artifacts.module';

// The artifacts service as its own process (distributed mode): `npm run start:artifacts`.
startWorkerService('artifacts', ArtifactsModule).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
