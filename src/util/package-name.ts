/**
 * The npm package this is (package.json `name`; a test keeps the two equal). The command stays
 * `sflow`; the name `sflow` on the npm registry belongs to an unrelated library, so everything
 * that installs or names the package (`sflow upgrade`, `--version`, docs) uses this one.
 */
export const PACKAGE_NAME = 'sflow-cli';
