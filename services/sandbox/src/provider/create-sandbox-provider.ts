import { BubblewrapProvider } from './bubblewrap/bubblewrap.provider';
import type { SandboxConfig } from './sandbox.config';
import type { SandboxProvider } from './sandbox-provider.port';
import { UnsafeHostProvider } from './unsafe-host/unsafe-host.provider';

export function createSandboxProvider(config: SandboxConfig, dataDir: string): SandboxProvider {
  return config.provider === 'unsafe-host' ? new UnsafeHostProvider(config, dataDir) : new BubblewrapProvider(config, dataDir);
}
