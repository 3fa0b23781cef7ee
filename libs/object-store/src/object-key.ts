import { ValidationError } from '@app/common';

const SEGMENT = /^[A-Za-z0-9._-]+$/;
export const MAX_KEY_LENGTH = 512;
/** A segment becomes a file name in the local adapter, and file names stop at 255 bytes. */
const MAX_SEGMENT_LENGTH = 255;

/** Keys are `/`-separated segments of `[A-Za-z0-9._-]`, never `.` or `..`: safe as file paths and S3 names alike. */
export function checkObjectKey(key: string): string {
  const segments = key.split('/');
  const bad =
    key.length === 0 ||
    key.length > MAX_KEY_LENGTH ||
    segments.some((s) => !SEGMENT.test(s) || s === '.' || s === '..' || s.length > MAX_SEGMENT_LENGTH);
  if (bad) throw new ValidationError(`invalid object key "${key.slice(0, 80)}"`);
  return key;
}

/** A prefix may end in `/` or be empty; otherwise the same rules. */
export function checkObjectPrefix(prefix: string): string {
  const trimmed = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  if (trimmed !== '') checkObjectKey(trimmed);
  return prefix;
}
