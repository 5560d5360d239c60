/**
 * Where sflow's shipped files (`assets/`: samples, agent skills, compute-node scripts) are.
 * Every caller goes through this one helper, so a different packaging (a single executable
 * with embedded assets, a system package) changes only this file.
 *
 * Lookup: `SFLOW_ASSETS_DIR` when set; else the nearest `assets/` folder above this module
 * that sits next to a `package.json` — the same in a checkout (src/, dist/, dist/bundle/)
 * and in an npm install (node_modules/sflow-cli/).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SflowError } from '../util/sflow-error.js';

let cachedRoot: string | undefined;

export function assetsRoot(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.SFLOW_ASSETS_DIR;
  if (override) return override;
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'assets');
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return (cachedRoot = candidate);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new SflowError(
    'assets.missing',
    "sflow's shipped files (assets/) were not found next to the program",
    {
      hint: 'reinstall sflow (npm install --global sflow-cli), or point SFLOW_ASSETS_DIR at the assets folder of an sflow checkout',
    },
  );
}

/** Absolute path of a shipped file or folder (`rel` uses `/`). */
export function assetPath(rel: string): string {
  return join(assetsRoot(), ...rel.split('/'));
}

export function assetExists(rel: string): boolean {
  return existsSync(assetPath(rel));
}

export function readAsset(rel: string): string {
  return readFileSync(assetPath(rel), 'utf8');
}

/** Every file under a shipped folder, as `/`-separated paths relative to that folder, sorted. */
export function listAssetFiles(relDir: string): string[] {
  const base = assetPath(relDir);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(base, p).split(sep).join('/'));
    }
  };
  if (existsSync(base) && statSync(base).isDirectory()) walk(base);
  return out.sort();
}
