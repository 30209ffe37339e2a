/**
 * Browser-mode access control. The host listens on 127.0.0.1 only, but any local process and any web page the
 * user visits can reach loopback, so:
 * - the Host header must name this server (defeats DNS rebinding) and a foreign Origin is refused (defeats
 *   cross-site WebSocket hijacking);
 * - the WebSocket, which drives the engine, needs the per-run token itself, in its URL; a cookie never opens it,
 *   because cookies are not scoped by port: a page another user serves on 127.0.0.1:<other port> would receive it;
 * - static files (the renderer build, no secrets) accept the token or a cookie holding a value *derived* from it,
 *   named after the port, so a leaked cookie opens nothing but the build.
 * Nothing here may throw on hostile input: a malformed cookie or request target is a 400/401, never a crash.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TOKEN_COOKIE, TOKEN_PARAM } from '../../shared/ipc/wire';

export const newToken = () => randomBytes(32).toString('base64url');

export function tokensEqual(a: string | undefined, b: string): boolean {
  if (typeof a !== 'string') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The raw cookie value (the values set here are base64url, so there is nothing to decode). */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The request target as a URL, or undefined when it is not a plain path (e.g. `//host:99999/`). */
export function requestUrl(req: IncomingMessage): URL | undefined {
  const target = req.url ?? '/';
  if (!target.startsWith('/') || target.startsWith('//')) return undefined;
  try {
    return new URL(target, 'http://host.invalid');
  } catch {
    return undefined;
  }
}

export type AuthVerdict = { ok: true; via: 'query' | 'cookie'; url: URL } | { ok: false; status: 400 | 401 | 403; reason: string };

export interface AuthContext {
  token: string;
  /** origins a browser may send, e.g. http://127.0.0.1:4123 and http://localhost:4123 */
  allowedOrigins: string[];
  /** host headers this server answers to */
  allowedHosts: string[];
  /** name of the static-files cookie (carries the port, so two hosts never overwrite each other's) */
  cookieName: string;
}

export const staticCookieName = (port: number) => `${TOKEN_COOKIE}_${port}`;

/** What the static-files cookie holds: a one-way function of the token, useless for the WebSocket. */
export function staticCookieValue(token: string): string {
  return createHmac('sha256', token).update('podscope static files').digest('base64url');
}

export function authorize(req: IncomingMessage, ctx: AuthContext, opts: { cookie: boolean }): AuthVerdict {
  const host = req.headers.host;
  if (!host || !ctx.allowedHosts.includes(host.toLowerCase())) return { ok: false, status: 403, reason: 'unexpected Host header' };
  const origin = req.headers.origin;
  // Browsers always send Origin on WebSocket upgrades and cross-site requests; non-browser clients may omit it.
  if (origin !== undefined && !ctx.allowedOrigins.includes(origin)) return { ok: false, status: 403, reason: 'foreign Origin' };
  const url = requestUrl(req);
  if (!url) return { ok: false, status: 400, reason: 'bad request target' };
  if (tokensEqual(url.searchParams.get(TOKEN_PARAM) ?? undefined, ctx.token)) return { ok: true, via: 'query', url };
  if (opts.cookie && tokensEqual(readCookie(req, ctx.cookieName), staticCookieValue(ctx.token))) return { ok: true, via: 'cookie', url };
  return { ok: false, status: 401, reason: 'missing or wrong token' };
}

export function staticCookie(ctx: AuthContext): string {
  return `${ctx.cookieName}=${staticCookieValue(ctx.token)}; HttpOnly; SameSite=Strict; Path=/`;
}
