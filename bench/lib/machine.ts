import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';

export interface MachineFacts {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly os: string;
  /** 1-minute load average when the bench started: above ~0.5 something else was using the CPUs. */
  readonly loadAtStart: number;
  /** The commit measured, and how many files outside bench/ differ from it. */
  readonly code: string;
}

export function machineFacts(): MachineFacts {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${type()} ${release()}`,
    loadAtStart: Math.round(loadavg()[0] * 100) / 100,
    code: codeVersion(),
  };
}

function codeVersion(): string {
  const root = join(__dirname, '..', '..');
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const commit = git('rev-parse', '--short', 'HEAD').trim();
    const changed = git('status', '--porcelain', '--', '.', ':(exclude)bench', ':(exclude)BENCHMARKS.md')
      .split('\n')
      .filter((line) => line.trim() !== '').length;
    return changed === 0 ? commit : `${commit} + ${changed} uncommitted file(s) outside bench/`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}
