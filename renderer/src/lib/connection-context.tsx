import { createContext, useContext, useSyncExternalStore } from 'react';
import type { Connection } from './connect';
import type { ConnectionState } from './ws-transport';

const ConnectionContext = createContext<Connection | null>(null);
export const ConnectionProvider = ConnectionContext.Provider;

export function useConnection(): Connection {
  const c = useContext(ConnectionContext);
  if (!c) throw new Error('ConnectionProvider missing');
  return c;
}

export const useClient = () => useConnection().client;

export function useSocketState(): ConnectionState {
  const { socket } = useConnection();
  return useSyncExternalStore(
    (cb) => socket?.onState(cb) ?? (() => {}),
    () => socket?.state() ?? 'open',
  );
}
