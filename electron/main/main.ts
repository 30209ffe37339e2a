/**
 * Electron main: decides the root policy, hosts the engine, registers the router on IPC and opens the window.
 * Everything about sandboxes lives in the engine; everything about requests in the router.
 */
import { app, dialog } from 'electron';
import { parseArgs } from 'node:util';
import { createAppCore } from '../core/app-core';
import { ENGINE_OPTION_FLAGS, engineOptionsFromFlags, type Flags } from '../core/engine-flags';
import type { EngineOptions } from '../engine/api';
import { trustOrigins } from '../ipc/sender';
import { APP_ORIGIN, registerAppScheme, serveRenderer } from './app-protocol';
import { denyAllPermissions, hardenApp } from './hardening';
import { bridgeRouterToIpc } from './ipc-bridge';
import { decideRootPolicy } from './root-policy';
import { createMainWindow, distPath } from './window';

const uid = process.getuid?.();
let engineOptions: Partial<EngineOptions> = {};
try {
  engineOptions = engineOptionsFromArgv(process.argv.slice(1));
} catch (e) {
  process.stderr.write(`podscope: ${(e as Error).message}\n`);
  app.exit(2);
}
const decision = decideRootPolicy(uid, process.argv);
if (decision.action === 'refuse') {
  process.stderr.write(`${decision.message}\n`);
  app.exit(1);
} else {
  if (decision.action === 'no-sandbox') {
    app.commandLine.appendSwitch('no-sandbox');
    process.stderr.write(`podscope: WARNING: ${decision.warning}\n`);
  }
  app.enableSandbox();
  registerAppScheme();
  hardenApp();
  if (!app.requestSingleInstanceLock()) app.exit(0);
  void start();
}

async function start(): Promise<void> {
  await app.whenReady();
  denyAllPermissions();
  serveRenderer(distPath('../renderer'));

  // An engine that cannot start (e.g. missing privileges) must not keep the window from opening: the core
  // then holds a stand-in that explains why.
  const core = await createAppCore({ engineOptions });
  const router = core.createRouter(trustOrigins([APP_ORIGIN]));
  const unbridge = bridgeRouterToIpc(router);

  const open = () =>
    createMainWindow({
      preloadPath: distPath('./preload.cjs'),
      chromiumSandbox: decision.action !== 'no-sandbox',
      runningAsRoot: uid === 0,
    });
  open();
  app.on('second-instance', () => open());
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', (event) => {
    // Sandboxes keep running (like containerd); only the state-dir lock is released.
    event.preventDefault();
    unbridge();
    core
      .close()
      .catch((e: unknown) => dialog.showErrorBox('Podscope', `engine did not close cleanly: ${String(e)}`))
      .finally(() => app.exit(0));
  });
}

/**
 * The engine flags of the CLI (`npm start -- --state-dir … --cni-conf-dir …`), read from Electron's argv; Chromium's
 * and Electron's own switches are left to them. A bad value is refused before anything starts.
 */
function engineOptionsFromArgv(argv: string[]): Partial<EngineOptions> {
  const { values } = parseArgs({ args: argv, options: ENGINE_OPTION_FLAGS, strict: false, allowPositionals: true });
  return engineOptionsFromFlags(values as Flags);
}
