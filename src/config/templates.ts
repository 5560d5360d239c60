/** One compiled template per distinct string: 10,000 replicas render the same few templates. */
import { compileTemplate, type CompiledTemplate } from './expr/index.js';

const CACHE = new Map<string, CompiledTemplate>();

export function compileCached(source: string): CompiledTemplate {
  let t = CACHE.get(source);
  if (!t) {
    t = compileTemplate(source);
    if (CACHE.size > 50_000) CACHE.clear();
    CACHE.set(source, t);
  }
  return t;
}
