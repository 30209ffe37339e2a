/**
 * Browser-mode access control. The host listens on 127.0.0.1 only, but any local process and any web page the
 * user visits can reach loopback, so every request needs the per-run token (query parameter once, then an
 * HttpOnly SameSite=Strict cookie), the Host header must name this server (defeats DNS rebinding), and a request
 * carrying a foreign Origin is refused (defeats cross-site WebSocket hijacking, which cookies alone allow).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TOKEN_COOKIE, TOKEN_PARAM } from '../../shared/ipc/wire';

export const newToken = () => randomBytes(32).toString('base64url');

export function tokensEqual(a: string | undefined, b: string): boolean {
  if (typeof a !== 'string') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

export type AuthVerdict = { ok: true; via: 'query' | 'cookie' } | { ok: false; status: 401 | 403; reason: string };

export interface AuthContext {
  token: string;
  /** origins a browser may send, e.g. http://127.0.0.1:4123 and http://localhost:4123 */
  allowedOrigins: string[];
  /** host headers this server answers to */
  allowedHosts: string[];
}

export function authorize(req: IncomingMessage, ctx: AuthContext): AuthVerdict {
  const host = req.headers.host;
  if (!host || !ctx.allowedHosts.includes(host.toLowerCase())) return { ok: false, status: 403, reason: 'unexpected Host header' };
  const origin = req.headers.origin;
  // Browsers always send Origin on WebSocket upgrades and cross-site requests; non-browser clients may omit it.
  if (origin !== undefined && !ctx.allowedOrigins.includes(origin)) return { ok: false, status: 403, reason: 'foreign Origin' };
  const url = new URL(req.url ?? '/', 'http://placeholder');
  if (tokensEqual(url.searchParams.get(TOKEN_PARAM) ?? undefined, ctx.token)) return { ok: true, via: 'query' };
  if (tokensEqual(readCookie(req, TOKEN_COOKIE), ctx.token)) return { ok: true, via: 'cookie' };
  return { ok: false, status: 401, reason: 'missing or wrong token' };
}

export function sessionCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
}
