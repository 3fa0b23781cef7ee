import { maxHeaderSize } from 'node:http';
import { describeFrameworkError } from './framework-errors';

const withCode = (code: string) => Object.assign(new Error('framework words, with the whole URL in them'), { code });

describe('describeFrameworkError', () => {
  it.each([
    ['FST_ERR_BAD_URL', 400, 'VALIDATION_ERROR', 'URL path is not valid'],
    ['FST_ERR_MAX_PARAM_LENGTH', 404, 'NOT_FOUND', 'longer than 100 characters'],
    ['HPE_HEADER_OVERFLOW', 431, 'PAYLOAD_TOO_LARGE', `request headers exceed ${maxHeaderSize} bytes`],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413, 'PAYLOAD_TOO_LARGE', 'chunk extensions'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'VALIDATION_ERROR', 'not received in time'],
    ['HPE_INVALID_METHOD', 400, 'VALIDATION_ERROR', 'malformed HTTP request'],
  ])('tells %s as %i %s in its own words', (code, status, contractCode, message) => {
    const described = describeFrameworkError(withCode(code))!;
    expect(described).toMatchObject({ status, code: contractCode });
    expect(described.message).toContain(message);
    expect(described.message).not.toContain('whole URL');
  });

  it('leaves every other error to the caller', () => {
    expect(describeFrameworkError(withCode('FST_ERR_ASYNC_CONSTRAINT'))).toBeUndefined();
    expect(describeFrameworkError(new Error('boom'))).toBeUndefined();
    expect(describeFrameworkError(null)).toBeUndefined();
  });
});
