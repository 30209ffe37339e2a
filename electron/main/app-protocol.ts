/**
 * The renderer is served from app://podscope/ rather than file://: every file:// page shares one opaque origin,
 * whereas a privileged standard scheme gives the window its own origin the router can check, and lets us attach
 * the CSP as a real header (as VS Code does with vscode-file://).
 */
import { net, protocol } from 'electron';
import { join, normalize, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { cspWithStyleNonce, fillStyleNonce } from '../../shared/ipc/style-nonce';

export const APP_SCHEME = 'app';
export const APP_ORIGIN = `${APP_SCHEME}://podscope`;

export const RENDERER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Must run before app 'ready'. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: false } }]);
}

export function serveRenderer(rendererDir: string): void {
  const root = normalize(rendererDir);
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== 'podscope') return new Response('not found', { status: 404 });
    const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = normalize(join(root, rel));
    if (!file.startsWith(root + sep)) return new Response('forbidden', { status: 403 });
    const res = await net.fetch(pathToFileURL(file).toString());
    const headers = new Headers(res.headers);
    headers.set('X-Content-Type-Options', 'nosniff');
    if (file.endsWith('.html') && res.ok) {
      // a fresh style nonce per page load (shared/ipc/style-nonce.ts): in the CSP header and in the page
      const nonce = randomBytes(16).toString('base64');
      headers.set('Content-Security-Policy', cspWithStyleNonce(RENDERER_CSP, nonce));
      headers.delete('Content-Length');
      return new Response(fillStyleNonce(await res.text(), nonce), { status: res.status, headers });
    }
    headers.set('Content-Security-Policy', RENDERER_CSP);
    return new Response(res.body, { status: res.status, headers });
  });
}
