/** The real NodeFiles: plain reads through node:fs, nothing opened for writing. */
import { access, readdir, readFile } from 'node:fs/promises';
import type { NodeFiles } from './deps';

export const nodeFiles: NodeFiles = {
  readDir: (dir) => readdir(dir).catch(() => undefined),
  readText: (file) => readFile(file, 'utf8').catch(() => undefined),
  exists: (path) =>
    access(path).then(
      () => true,
      () => false,
    ),
};
