/**
 * App-wide guards, applied to every webContents ever created (Electron security checklist items 4-14):
 * no navigation away from the app, no new windows (links open in the OS browser only if http(s)),
 * no <webview>, every permission request and check denied.
 */
import { app, session, shell } from 'electron';
import { sameOrigin } from '../ipc/sender';
import { APP_ORIGIN } from './app-protocol';

export function hardenApp(): void {
  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-navigate', (event, url) => {
      if (!sameOrigin(url, APP_ORIGIN)) event.preventDefault();
    });
    contents.on('will-redirect', (event) => event.preventDefault());
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      // Documentation links may open in the user's browser; nothing ever opens inside the app.
      if (/^https:\/\//.test(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
  });
}

/** Writing to the clipboard (the Copy buttons) is the one permission granted, and only to our own origin. */
const ALLOWED_PERMISSION = 'clipboard-sanitized-write';

export function denyAllPermissions(): void {
  const s = session.defaultSession;
  s.setPermissionRequestHandler((wc, permission, callback) =>
    callback(permission === ALLOWED_PERMISSION && sameOrigin(wc.getURL(), APP_ORIGIN)),
  );
  s.setPermissionCheckHandler((_wc, permission, origin) => permission === ALLOWED_PERMISSION && sameOrigin(origin, APP_ORIGIN));
  s.setDevicePermissionHandler(() => false);
}
