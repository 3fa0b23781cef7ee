import { describeSandboxProviderContract, testSandboxConfig } from '../testing/sandbox-provider.contract';
import { UnsafeHostProvider } from './unsafe-host.provider';

describeSandboxProviderContract(
  'unsafe-host',
  (dataDir, limits) => new UnsafeHostProvider(testSandboxConfig('unsafe-host', limits, {}), dataDir),
);
