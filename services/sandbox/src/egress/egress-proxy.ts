import { randomBytes } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseHostPatterns } from '@app/common';
import type { FileOwner } from '../provider/sandbox-provider.port';
import type { EgressConfig } from './egress.config';
import { EgressSession } from './egress-session';

/**
 * The sandbox service's egress proxy (SANDBOX_NETWORK=egress): one session per command of a
 * task, on a unix socket of its own under SANDBOX_RUNTIME_DIR/egress that only that task's uid
 * may open and that only that command's sandbox has bound in. A command's connections end with it.
 */
export class EgressProxy {
  private readonly folder: string;

  constructor(
    private readonly config: EgressConfig,
    runtimeDir: string,
  ) {
    this.folder = join(runtimeDir, 'egress');
  }

  /**
   * A session for one command of `taskId`, whose allow-list is `allow` (the task's `network.allow`)
   * or, absent, SANDBOX_EGRESS_ALLOW. A bad pattern (the API refuses them) throws naming it.
   */
  async start(taskId: string, owner: FileOwner, allow: readonly string[] | undefined): Promise<EgressSession> {
    const policy = {
      allow: allow === undefined ? this.config.defaultAllow : parseHostPatterns(allow, 'network.allow'),
      allowSource: allow === undefined ? 'SANDBOX_EGRESS_ALLOW' : "the task's network.allow",
      allowHosts: this.config.allowHosts,
    };
    // Passable by bwrap (the task's uid) to bind the socket in; the socket itself is the task's alone.
    await mkdir(this.folder, { recursive: true, mode: 0o711 });
    await chmod(this.folder, 0o711);
    return EgressSession.start({
      socketPath: join(this.folder, `${taskId}.${randomBytes(6).toString('hex')}.sock`),
      owner,
      policy,
      maxConnections: this.config.maxConnections,
      idleTimeoutMs: this.config.idleTimeoutMs,
    });
  }
}
