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
  /**
   * one window (Electron webContents) or one WebSocket: the owner of the stream sessions it opens, which end when the
   * front door calls router.closeConnection with it
   */
  connectionId?: string;
}

/** who owns a session: the connection, or (a transport without one) the sender itself */
export const ownerOf = (sender: SenderInfo): string => sender.connectionId ?? `${sender.transport}:${sender.url}`;

/** A policy: which senders may call at all. */
export type SenderPolicy = (sender: SenderInfo) => boolean;

/** Trust exactly the given origins (scheme://host[:port]). */
export function trustOrigins(allowed: string[]): SenderPolicy {
  return (sender) => {
    if (sender.transport === 'websocket' && !sender.authenticated) return false;
    return allowed.some((a) => sameOrigin(sender.url, a));
  };
}

/**
 * Scheme + host + port equality, spelled out: WHATWG URL gives every non-special scheme (our app://podscope) the
 * opaque origin "null", so comparing `.origin` would refuse the app's own window (or, worse, equate all of them).
 */
export function sameOrigin(url: string, origin: string): boolean {
  try {
    const u = new URL(url);
    const o = new URL(origin);
    return u.protocol === o.protocol && u.host !== '' && u.host === o.host;
  } catch {
    return false;
  }
}
