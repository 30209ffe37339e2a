/** Plugin lookup as libcni's invoke.FindInPath: the first regular file `<dir>/<type>` in bin-dir order. */
import { stat } from 'node:fs/promises';
import path from 'node:path';

export async function resolvePluginBinary(type: string, binDirs: string[]): Promise<string | undefined> {
  for (const dir of binDirs) {
    const candidate = path.join(dir, type);
    try {
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // missing or unreadable: keep looking, as libcni does
    }
  }
  return undefined;
}

export async function findPluginInPath(type: string, binDirs: string[]): Promise<string> {
  if (type === '') throw new Error('no plugin name provided');
  if (type.includes('/')) throw new Error(`invalid plugin name: ${type}`);
  if (binDirs.length === 0) throw new Error('no paths provided');
  const found = await resolvePluginBinary(type, binDirs);
  if (!found) throw new Error(`failed to find plugin "${type}" in path [${binDirs.join(' ')}]`);
  return found;
}
