/**
 * Electron IPC on top of the shared router: one invoke channel in, one event channel out. The sender's frame URL
 * goes to the router, which refuses anything that is not our app:// page (e.g. a frame that navigated elsewhere).
 */
import { ipcMain, webContents } from 'electron';
import { EVENT_CHANNEL, INVOKE_CHANNEL } from '../../shared/ipc/events';
import type { Router } from '../ipc/router';

export function bridgeRouterToIpc(router: Router): () => void {
  // one connection per webContents; a window that closes, crashes or reloads ends the sessions it opened
  const watched = new Set<number>();
  const connectionOf = (wc: Electron.WebContents): string => {
    const id = `wc-${wc.id}`;
    if (!watched.has(wc.id)) {
      watched.add(wc.id);
      const end = () => void router.closeConnection(id);
      wc.once('destroyed', () => {
        watched.delete(wc.id);
        end();
      });
      wc.on('render-process-gone', end);
      wc.on('did-start-navigation', (details) => {
        if (details.isMainFrame && !details.isSameDocument) end();
      });
    }
    return id;
  };
  ipcMain.handle(INVOKE_CHANNEL, (event, channel: unknown, payload: unknown) =>
    router.handle(String(channel), payload, {
      transport: 'electron',
      url: event.senderFrame?.url ?? '',
      connectionId: connectionOf(event.sender),
    }),
  );
  const unsubscribe = router.subscribe((e, target) => {
    for (const wc of webContents.getAllWebContents()) {
      if (target !== undefined && `wc-${wc.id}` !== target) continue;
      if (!wc.isDestroyed() && wc.getURL().startsWith('app://podscope/')) wc.send(EVENT_CHANNEL, e);
    }
  });
  return () => {
    ipcMain.removeHandler(INVOKE_CHANNEL);
    unsubscribe();
  };
}
