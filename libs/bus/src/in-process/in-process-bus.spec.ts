import { describeBusContract } from '../testing/bus.contract';
import { InProcessBus } from './in-process-bus';

describeBusContract('in-process', async () => {
  const bus = new InProcessBus();
  return { bus, cleanup: () => bus.close() };
});
