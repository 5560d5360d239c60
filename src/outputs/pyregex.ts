/** Result patterns (config.md 1.15) are written in Python syntax; compiled through util/python-regex. */
import { PyRegexError, translatePythonRegex } from '../util/python-regex.js';
import { errorMessage } from '../util/errors.js';

export { PyRegexError, translatePythonRegex as translatePyRegex };

/** Compiles a Python-syntax pattern; throws PyRegexError with a readable message. */
export function compilePyRegex(src: string, extraFlags = ''): RegExp {
  const { source, flags } = translatePythonRegex(src);
  try {
    return new RegExp(source, [...new Set((flags + extraFlags).split(''))].join(''));
  } catch (e) {
    throw new PyRegexError(`invalid regex ${JSON.stringify(src)}: ${errorMessage(e)}`);
  }
}
