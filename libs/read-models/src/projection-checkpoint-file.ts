import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * A projection's state and checkpoint saved as one JSON file, written atomically (temp file +
 * rename) so a crash leaves the previous snapshot, never half of one. A missing or unreadable
 * file just means "rebuild from the store".
 */
export class ProjectionCheckpointFile<State> {
  private dirty = false;
  private timer?: NodeJS.Timeout;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly intervalMs = 2000,
  ) {}

  async load(): Promise<State | undefined> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as State;
    } catch {
      return undefined;
    }
  }

  markDirty(): void {
    this.dirty = true;
  }

  startAutosave(snapshot: () => State): void {
    this.timer = setInterval(() => void this.saveIfDirty(snapshot), this.intervalMs);
    this.timer.unref();
  }

  async stop(snapshot: () => State): Promise<void> {
    clearInterval(this.timer);
    await this.saveIfDirty(snapshot);
  }

  private saveIfDirty(snapshot: () => State): Promise<void> {
    if (!this.dirty) return this.saving;
    this.dirty = false;
    const body = JSON.stringify(snapshot());
    this.saving = this.saving.then(async () => {
      await mkdir(dirname(this.path), { recursive: true });
      const tmp = `${this.path}.${process.pid}.tmp`;
      await writeFile(tmp, body);
      await rename(tmp, this.path);
    });
    return this.saving;
  }
}
