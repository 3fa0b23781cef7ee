import { isAbsolute, relative, resolve, sep } from 'node:path';

// Artifact paths come from the service and are untrusted like everything it sends: a path that
// climbs out of the output folder (`../.bashrc`), names an absolute place (`/etc/cron.d/x`), or
// hides a NUL, a control character or a Windows separator must not decide where a file is written.

export class UnsafeArtifactPathError extends Error {
  override readonly name = 'UnsafeArtifactPathError';
}

/**
 * Where an artifact is written under `outDir`: its path without the leading `downloads/` (where
 * every artifact lives), checked segment by segment and again after resolving.
 */
export function downloadTarget(outDir: string, artifactPath: string): string {
  const refuse = (why: string) => new UnsafeArtifactPathError(`refusing artifact path ${JSON.stringify(artifactPath)}: ${why}`);
  if (artifactPath.length === 0) throw refuse('it is empty');
  // Every character safeText shows as an escape (untrusted-text.ts), and tab and newline too: C0,
  // DEL, C1 and the bidi overrides and isolates (Unicode's bidirectional control characters).
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\\]/.test(artifactPath)) {
    throw refuse('it holds a control character or a backslash');
  }
  if (isAbsolute(artifactPath) || /^[a-zA-Z]:/.test(artifactPath)) throw refuse('it is absolute');
  const segments = artifactPath.replace(/^downloads\//, '').split('/');
  if (segments.some((segment) => segment === '..')) throw refuse('it climbs out of the output folder');
  if (segments.some((segment) => segment === '' || segment === '.')) throw refuse('it has an empty or "." segment');
  const root = resolve(outDir);
  const target = resolve(root, ...segments);
  const inside = relative(root, target);
  if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) throw refuse('it leaves the output folder');
  return target;
}
