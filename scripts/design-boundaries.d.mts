/** Types of scripts/design-boundaries.mjs, for the tests that import it. */
export const RECORD_SCOPE: string[];
export const PARSE_BOUNDARIES: Record<string, string>;
export function isParseBoundary(file: string): boolean;
export const RECORD_ALLOW_LIST: string[];
