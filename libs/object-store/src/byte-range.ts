import { ValidationError } from '@app/common';
import type { ByteRange } from './object-store.port';

/** Refuses a range that could never be valid, before the object is even looked up. */
export function checkRangeShape(key: string, range: ByteRange): void {
  const { offset, length } = range;
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new ValidationError(`invalid byte range ${describeRange(range)} of object "${key}": offset and length must be integers ≥ 0`);
  }
}

/** Refuses a range that runs past the end of an object of `size` bytes. */
export function checkRangeWithin(key: string, range: ByteRange, size: number): void {
  if (range.offset + range.length > size) throw outOfBounds(key, range, size);
}

export function outOfBounds(key: string, range: ByteRange, size?: number): ValidationError {
  const of = size === undefined ? '' : ` (${size} bytes)`;
  return new ValidationError(`byte range ${describeRange(range)} is not within object "${key}"${of}`);
}

function describeRange({ offset, length }: ByteRange): string {
  return `offset ${offset} length ${length}`;
}
