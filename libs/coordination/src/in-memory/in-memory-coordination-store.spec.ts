import { describeCoordinationStoreContract } from '../testing/coordination.contract';
import { InMemoryCoordinationStore } from './in-memory-coordination-store';

describeCoordinationStoreContract('in-memory', async (options) => new InMemoryCoordinationStore(options));
