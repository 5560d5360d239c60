import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** `tool` is an executable file in one of the folders of `path` (a PATH value) */
export function onPath(tool: string, path = ''): boolean {
  return path.split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
