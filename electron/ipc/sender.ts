/**
 * Who sent a request. Both transports describe the sender the same way so the router applies one policy:
 * Electron passes the URL of the frame that called invoke; the browser host passes the Origin it already checked.
 */
export interface SenderInfo {
  transport: 'electron' | 'websocket' | 'memory';
  /** URL (Electron: senderFrame.url) or origin (WebSocket) of the caller */
  url: string;
  /** true only when the transport has authenticated the caller (browser-mode token) */
  authenticated?: boolean;
}

/** A policy: which senders may call at all. */
export type SenderPolicy = (sender: SenderInfo) => boolean;

/**
 * Trust exactly the given origins (scheme://host[:port]); for file: URLs the whole URL prefix must match,
 * because every file:// page shares the opaque "null" origin.
 */
export function trustOrigins(allowed: string[]): SenderPolicy {
  return (sender) => {
    if (sender.transport === 'websocket' && !sender.authenticated) return false;
    const url = sender.url;
    return allowed.some((a) => (a.startsWith('file://') ? url.startsWith(a) : originOf(url) === a));
  };
}

export function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.origin === 'null' ? undefined : u.origin;
  } catch {
    return undefined;
  }
}
