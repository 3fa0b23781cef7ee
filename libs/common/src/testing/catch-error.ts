/** The error `fn` throws, for specs that look at more than its message; fails when it throws nothing. */
export function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
