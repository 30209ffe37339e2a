/**
 * The only bridge between the page and the main process. Runs sandboxed with contextIsolation: it exposes
 * three typed members and never ipcRenderer itself, so a compromised page can only speak the channel map,
 * which the router validates again on the other side.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { EVENT_CHANNEL, INVOKE_CHANNEL } from '../../shared/ipc/events';
import { NO_SANDBOX_ARG, ROOT_ARG, type PodscopeBridge } from '../../shared/ipc/bridge';
import type { PushedEvent } from '../../shared/ipc/events';
import type { Reply } from '../../shared/ipc/wire';

const bridge: PodscopeBridge = {
  invoke: (channel, payload) => ipcRenderer.invoke(INVOKE_CHANNEL, channel, payload) as Promise<Reply>,
  onEvent(listener) {
    // Wrap so the page never receives the IpcRendererEvent (it exposes sender).
    const wrapped = (_e: IpcRendererEvent, event: PushedEvent) => listener(event);
    ipcRenderer.on(EVENT_CHANNEL, wrapped);
    return () => {
      ipcRenderer.removeListener(EVENT_CHANNEL, wrapped);
    };
  },
  environment: {
    chromiumSandbox: !process.argv.includes(NO_SANDBOX_ARG),
    runningAsRoot: process.argv.includes(ROOT_ARG),
  },
};

contextBridge.exposeInMainWorld('podscope', bridge);
