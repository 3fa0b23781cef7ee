import type { RawResponse } from './raw-http-client';
import type { Expectation } from './request-arbitraries';

/** docs/api.md "Errors": the statuses of each code (431 for headers too large; 408 never comes, the fuzz stalls no request). */
export const STATUSES_OF_CODE: Record<string, readonly number[]> = {
  VALIDATION_ERROR: [400],
  AUTH_REQUIRED: [401],
  INVALID_API_KEY: [401],
  NOT_FOUND: [404],
  CONFLICT: [409],
  PAYLOAD_TOO_LARGE: [413, 431],
  RATE_LIMITED: [429],
};

/** The `error.code` of an answer in the error envelope, if it is one. */
function errorCodeOf(res: RawResponse): string | undefined {
  try {
    const code = (JSON.parse(res.body.toString('utf8')) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why `res` is not the answer the contract fixes for a request, or undefined: a valid request
 * gets its route's `successStatus` and nothing else, a refused one its defect's code with a status
 * of that code.
 */
export function expectationBreach(expected: Expectation, res: RawResponse, successStatus: number | undefined): string | undefined {
  const code = errorCodeOf(res);
  const got = `${res.status}${code === undefined ? '' : ` ${code}`}`;
  if ('success' in expected)
    return res.status === successStatus ? undefined : `a valid request answered ${got}, expected ${successStatus ?? 'a route'}`;
  const statuses = STATUSES_OF_CODE[expected.code];
  return code === expected.code && statuses.includes(res.status)
    ? undefined
    : `${expected.because}: answered ${got}, expected ${statuses.join(' or ')} ${expected.code}`;
}
