/// <reference types="vite/client" />
import type { PodscopeBridge } from '../../shared/ipc/bridge';

declare global {
  interface Window {
    /** present only inside the Electron window (preload) */
    podscope?: PodscopeBridge;
  }
}
