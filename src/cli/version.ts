import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

export const VERSION = readVersion();

export function versionText(): string {
  return [
    `sflow ${VERSION}`,
    `  node: ${process.version} (${process.platform}-${process.arch})`,
    `  bin: ${process.argv[1] ?? 'sflow'}`,
    `  package: ${root}`,
  ].join('\n');
}
