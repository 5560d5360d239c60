/** Types of scripts/design-metrics.mjs, for the tests that import it. */
export interface Place {
  line: number;
  alias?: string;
  name?: string;
  lines?: number;
}
export interface Analysis {
  casts: Place[];
  recordUnknown: Place[];
  asUnknownAs: Place[];
  longFunctions: Place[];
}
export interface Figures {
  sourceFiles: number;
  casts: number;
  recordUnknown: number;
  asUnknownAs: number;
  longFunctions: number;
  probeKindFiles: number | null;
}
export interface ProbeKindCommit {
  kind: string;
  commit: string;
  files: string[];
  docs: string[];
}
export const LIMITS: Record<Exclude<keyof Figures, 'sourceFiles'>, number>;
export const REACHED: Record<Exclude<keyof Figures, 'sourceFiles'>, number>;
export const LONG_FUNCTION_LINES: number;
export function recordAliases(file: string, text: string): Set<string>;
export function analyseSource(file: string, text: string, aliases?: Set<string>): Analysis;
export function probeKindCommits(root?: string): { kinds?: ProbeKindCommit[]; error?: string };
export function measure(root?: string): {
  figures: Figures;
  places: Record<
    'casts' | 'recordUnknown' | 'asUnknownAs' | 'longFunctions',
    Array<Place & { file: string }>
  >;
  probes: { kinds?: ProbeKindCommit[]; error?: string };
};
