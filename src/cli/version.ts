import { PACKAGE_NAME } from '../util/package-name.js';
import { PACKAGE_ROOT, VERSION } from '../util/version.js';

export { VERSION };

export function versionText(): string {
  return [
    `sflow ${VERSION}`,
    `  npm package: ${PACKAGE_NAME}`,
    `  node: ${process.version} (${process.platform}-${process.arch})`,
    `  bin: ${process.argv[1] ?? 'sflow'}`,
    `  package: ${PACKAGE_ROOT}`,
  ].join('\n');
}
