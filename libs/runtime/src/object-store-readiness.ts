import { Inject, Injectable } from '@nestjs/common';
import { Readiness } from '@app/metrics';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';

/** A key nobody writes: looking it up is the object store's readiness probe. */
const READINESS_PROBE_KEY = 'readiness/probe';

/** Listed by the services that use the object store (API, sandbox, artifacts): /readyz then waits for it too. */
@Injectable()
export class ObjectStoreReadiness {
  constructor(readiness: Readiness, @Inject(OBJECT_STORE) objects: ObjectStore) {
    readiness.add('objectStore', () => objects.stat(READINESS_PROBE_KEY));
  }
}
