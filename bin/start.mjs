#!/usr/bin/env node
/**
 * `npm start [-- FLAGS]`: the Electron window where an Electron binary and a display exist, otherwise browser mode
 * (`podscope serve`), printing the URL (with its one-time token) to open. Both take the same flags: every engine flag
 * of the CLI (--cni-conf-dir, --state-dir, …; see `npx podscope serve --help`), and --port for browser mode.
 * --browser forces browser mode. Electron as root is refused unless --allow-root is passed (see
 * electron/main/root-policy.ts); browser mode is the recommended way to run as root.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { electronBinary } from './electron-binary.mjs';
import { cliMode, ensureRendererBuilt, loadCliMain } from './load-cli.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const forceBrowser = args.includes('--browser') || process.env.PODSCOPE_BROWSER === '1';
const passed = args.filter((a) => a !== '--browser');

function run(cmd, cmdArgs) {
  const child = spawn(cmd, cmdArgs, { stdio: 'inherit', cwd: root });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

const electron = electronBinary();
const display = !!(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);

if (electron && display && !forceBrowser) {
  await ensureRendererBuilt();
  if (cliMode === 'source' && !existsSync(`${root}dist/electron/main.js`)) {
    if ((await run(process.execPath, [`${root}scripts/build-electron.mjs`])) !== 0) process.exit(1);
  }
  process.exit(await run(electron, [`${root}dist/electron/main.js`, ...passed]));
} else {
  if (!forceBrowser) {
    console.error(
      electron ? 'podscope: no display found; starting browser mode.' : 'podscope: no Electron binary installed; starting browser mode.',
    );
  }
  await ensureRendererBuilt();
  const main = await loadCliMain();
  process.exitCode = await main(['serve', ...passed]);
}
