import { describeSandboxProviderContract } from '../testing/sandbox-provider.contract';
import { UnsafeHostProvider } from './unsafe-host.provider';

describeSandboxProviderContract(
  'unsafe-host',
  (dataDir, limits) =>
    new UnsafeHostProvider({ provider: 'unsafe-host', limits, network: true, uidBase: 200_000, uidCount: 50_000 }, dataDir),
);
