/** What the summary's Runtime section shows: sflow version, node, bin, package folder. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RuntimeInfo } from '../events/events.js';

let cached: RuntimeInfo | undefined;

export function runtimeInfo(): RuntimeInfo {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  let version = 'unknown';
  let packageDir = dir;
  for (let i = 0; i < 5; i++) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        const j = JSON.parse(readFileSync(pj, 'utf8')) as { name?: string; version?: string };
        if (j.name === 'sflow') {
          version = j.version ?? version;
          packageDir = dir;
          break;
        }
      } catch {
        /* keep looking */
      }
    }
    dir = dirname(dir);
  }
  cached = { version, node: process.version, bin: process.argv[1] ?? '', packageDir };
  return cached;
}
