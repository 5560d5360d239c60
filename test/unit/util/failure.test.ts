import { describe, expect, it } from 'vitest';
import { isTransient, TRANSIENT_CODES } from '../../../src/util/failure.js';

const errno = (code: string) => Object.assign(new Error(code), { code });

describe('isTransient: whether trying again may help, from what the error carries', () => {
  it('errno codes of a start that may work the next time', () => {
    for (const code of ['ETXTBSY', 'EAGAIN', 'EBUSY', 'ECONNRESET', 'ETIMEDOUT']) {
      expect(TRANSIENT_CODES.has(code)).toBe(true);
      expect(isTransient(errno(code)), code).toBe(true);
    }
    for (const code of ['ENOENT', 'EACCES', 'E2BIG', 'EPERM'])
      expect(isTransient(errno(code)), code).toBe(false);
  });

  it('an engine answer 5xx is transient, 4xx is not (statusCode, or a numeric code as the Kubernetes client has)', () => {
    expect(isTransient(Object.assign(new Error('x'), { statusCode: 503 }))).toBe(true);
    expect(isTransient(Object.assign(new Error('x'), { code: 500 }))).toBe(true);
    expect(isTransient(Object.assign(new Error('x'), { code: 404 }))).toBe(false);
    expect(isTransient(Object.assign(new Error('x'), { statusCode: 429 }))).toBe(false);
  });

  it('a timeout is transient; a plain error, a string or nothing is not', () => {
    expect(isTransient(new DOMException('timed out', 'TimeoutError'))).toBe(true);
    expect(isTransient(new Error('no such program'))).toBe(false);
    expect(isTransient('EAGAIN')).toBe(false);
    expect(isTransient(undefined)).toBe(false);
  });

  it('follows the cause chain; an explicit `retryable` wins over what lies below it', () => {
    expect(isTransient(new Error('launch failed', { cause: errno('EAGAIN') }))).toBe(true);
    expect(isTransient(Object.assign(new Error('no'), { retryable: false, cause: errno('EAGAIN') }))).toBe(
      false,
    );
    expect(isTransient(Object.assign(new Error('yes'), { retryable: true }))).toBe(true);
  });
});
