/** The one application window, with Electron's secure defaults spelled out rather than assumed. */
import { BrowserWindow, nativeTheme } from 'electron';
import { fileURLToPath } from 'node:url';
import { NO_SANDBOX_ARG, ROOT_ARG } from '../../shared/ipc/bridge';
import { APP_ORIGIN } from './app-protocol';

export interface WindowOptions {
  preloadPath: string;
  chromiumSandbox: boolean;
  runningAsRoot: boolean;
}

export function createMainWindow(o: WindowOptions): BrowserWindow {
  const args = [...(o.chromiumSandbox ? [] : [NO_SANDBOX_ARG]), ...(o.runningAsRoot ? [ROOT_ARG] : [])];
  const win = new BrowserWindow({
    width: 1440,
    height: 900,
    minWidth: 960,
    minHeight: 600,
    title: 'Podscope',
    show: false,
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#16181d' : '#ffffff',
    webPreferences: {
      preload: o.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
      navigateOnDragDrop: false,
      additionalArguments: args,
    },
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(`${APP_ORIGIN}/index.html`);
  return win;
}

export const distPath = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
