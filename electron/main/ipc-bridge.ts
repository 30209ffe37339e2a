/**
 * Electron IPC on top of the shared router: one invoke channel in, one event channel out. The sender's frame URL
 * goes to the router, which refuses anything that is not our app:// page (e.g. a frame that navigated elsewhere).
 */
import { ipcMain, webContents } from 'electron';
import { EVENT_CHANNEL, INVOKE_CHANNEL } from '../../shared/ipc/events';
import type { Router } from '../ipc/router';

export function bridgeRouterToIpc(router: Router): () => void {
  ipcMain.handle(INVOKE_CHANNEL, (event, channel: unknown, payload: unknown) =>
    router.handle(String(channel), payload, { transport: 'electron', url: event.senderFrame?.url ?? '' }),
  );
  const unsubscribe = router.subscribe((e) => {
    for (const wc of webContents.getAllWebContents()) {
      if (!wc.isDestroyed() && wc.getURL().startsWith('app://podscope/')) wc.send(EVENT_CHANNEL, e);
    }
  });
  return () => {
    ipcMain.removeHandler(INVOKE_CHANNEL);
    unsubscribe();
  };
}
