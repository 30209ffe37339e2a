/** Electron transport: a thin wrapper over the preload bridge (window.podscope). */
import type { PodscopeBridge } from '../../../shared/ipc/bridge';
import type { Transport } from '../../../shared/ipc/client';

export function createElectronTransport(bridge: PodscopeBridge): Transport {
  return {
    kind: 'electron',
    invoke: (channel, payload) => bridge.invoke(channel, payload),
    onEvent: (listener) => bridge.onEvent(listener),
  };
}
