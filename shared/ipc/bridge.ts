/**
 * What the Electron preload exposes on `window.podscope` (contextBridge). Nothing else crosses into the page:
 * no ipcRenderer, no Node. The renderer's Electron transport is written against this interface only.
 */
import type { ChannelName } from './channels';
import type { PushedEvent } from './events';
import type { Reply } from './wire';

export interface HostEnvironment {
  /** false when Chromium's OS-level sandbox is off (Electron started as root with --allow-root) */
  chromiumSandbox: boolean;
  /** set when the app was started as root */
  runningAsRoot: boolean;
}

export interface PodscopeBridge {
  invoke(channel: ChannelName, payload: unknown): Promise<Reply>;
  onEvent(listener: (e: PushedEvent) => void): () => void;
  environment: HostEnvironment;
}

/** The argument main passes to the renderer process so the preload can tell the page about the sandbox state. */
export const NO_SANDBOX_ARG = '--podscope-chromium-sandbox=off';
export const ROOT_ARG = '--podscope-root';
