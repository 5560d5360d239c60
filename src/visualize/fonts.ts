/**
 * Font files for PNG rendering. resvg draws no text without a font, and a slim container may have
 * none, so we look (in order) at: `SFLOW_FONT_FILE`, the `dejavu-fonts-ttf` npm package when it is
 * installed, well-known system paths (Debian/Ubuntu, Fedora, Arch, Alpine, macOS, Windows), then a
 * bounded scan of the usual font folders. Loading one known file is much faster than resvg's full
 * system-font scan.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

const KNOWN_FILES = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/TTF/DejaVuSans.ttf',
  '/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf',
  '/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf',
  '/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf',
  '/usr/share/fonts/noto/NotoSans-Regular.ttf',
  '/usr/share/fonts/truetype/freefont/FreeSans.ttf',
  '/System/Library/Fonts/Helvetica.ttc',
  '/Library/Fonts/Arial.ttf',
  'C:\\Windows\\Fonts\\arial.ttf',
];

const SCAN_DIRS = ['/usr/share/fonts', '/usr/local/share/fonts'];
const FONT_EXT = /\.(ttf|otf|ttc)$/i;
const PREFERRED =
  /^(DejaVuSans|LiberationSans-Regular|NotoSans-Regular|FreeSans|Arial|Helvetica)\.(ttf|otf|ttc)$/i;

let cached: string[] | undefined;

/** The font file(s) PNG rendering loads; empty when none could be found (labels would be blank). */
export function resolveFontFiles(): string[] {
  cached ??= findFontFiles();
  return cached;
}

/** Uncached lookup; exported for tests. */
export function findFontFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = env.SFLOW_FONT_FILE;
  if (fromEnv && existsSync(fromEnv)) return [fromEnv];
  const bundled = bundledFont();
  if (bundled) return [bundled];
  for (const f of KNOWN_FILES) if (existsSync(f)) return [f];
  const dirs = [...SCAN_DIRS, join(homedir(), '.fonts'), join(homedir(), '.local/share/fonts')];
  let fallback: string | undefined;
  for (const dir of dirs) {
    const found = scan(dir, 4, { seen: 0 });
    if (found?.preferred) return [found.preferred];
    fallback ??= found?.any;
  }
  return fallback ? [fallback] : [];
}

function bundledFont(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const path = require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
    return existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Depth- and size-bounded search for a font file; stops at the first preferred one. */
function scan(
  dir: string,
  depth: number,
  budget: { seen: number },
): { preferred?: string; any?: string } | undefined {
  if (depth < 0 || budget.seen > 5000) return undefined;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let any: string | undefined;
  const subdirs: string[] = [];
  for (const e of entries) {
    budget.seen++;
    if (e.isDirectory()) subdirs.push(join(dir, e.name));
    else if (FONT_EXT.test(e.name)) {
      if (PREFERRED.test(e.name)) return { preferred: join(dir, e.name) };
      any ??= join(dir, e.name);
    }
  }
  for (const sub of subdirs) {
    const found = scan(sub, depth - 1, budget);
    if (found?.preferred) return found;
    any ??= found?.any;
  }
  return any ? { any } : undefined;
}
