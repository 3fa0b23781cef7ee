import { BubblewrapProvider } from './bubblewrap/bubblewrap.provider';
import type { ChangeHints } from '../workspace/checkpoints/change-hints';
import type { SandboxConfig } from './sandbox.config';
import type { SandboxProvider } from './sandbox-provider.port';
import { UnsafeHostProvider } from './unsafe-host/unsafe-host.provider';

/** `hints` learns of each task's workspace filesystem (bubblewrap's `filesystem` kind only). */
export function createSandboxProvider(config: SandboxConfig, dataDir: string, hints?: ChangeHints): SandboxProvider {
  return config.provider === 'unsafe-host' ? new UnsafeHostProvider(config, dataDir) : new BubblewrapProvider(config, dataDir, hints);
}
