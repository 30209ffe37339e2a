// Where the Electron binary is, found WITHOUT require('electron'): that module downloads the binary when it is
// missing, and neither `npm start` nor the tests may reach the network behind the user's back.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** @returns {string | undefined} */
export function electronBinary() {
  try {
    const dir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    const pathFile = join(dir, 'path.txt');
    const rel = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : 'electron';
    const full = process.env.ELECTRON_OVERRIDE_DIST_PATH ? join(process.env.ELECTRON_OVERRIDE_DIST_PATH, rel) : join(dir, 'dist', rel);
    return existsSync(full) ? full : undefined;
  } catch {
    return undefined;
  }
}
