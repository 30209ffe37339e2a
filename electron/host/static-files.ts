/** Serves the built renderer from one directory, never outside it, with strict security headers. */
import { createReadStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { cspWithStyleNonce, fillStyleNonce } from '../../shared/ipc/style-nonce';
import { pipeline } from 'node:stream';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import type { ServerResponse } from 'node:http';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** Same policy as the Electron window, plus the WebSocket origin this host uses. */
export function contentSecurityPolicy(wsOrigin: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${wsOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function securityHeaders(csp: string): Record<string, string> {
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  };
}

export async function serveStatic(rootDir: string, pathname: string, res: ServerResponse, headers: Record<string, string>): Promise<void> {
  const root = resolve(rootDir);
  let rel: string;
  try {
    rel = decodeURIComponent(pathname);
  } catch {
    return plain(res, 400, 'bad path', headers);
  }
  if (rel.includes('\0')) return plain(res, 400, 'bad path', headers);
  let file = normalize(join(root, rel));
  if (file !== root && !file.startsWith(root + sep)) return plain(res, 403, 'forbidden', headers);
  let info = await stat(file).catch(() => undefined);
  // A single-page app: unknown paths without an extension fall back to index.html.
  if (!info?.isFile() && extname(rel) === '') {
    file = join(root, 'index.html');
    info = await stat(file).catch(() => undefined);
  }
  if (!info?.isFile()) {
    const hint =
      rel === '/' || rel === '/index.html' ? `renderer not built: run "npm run build:renderer" (looked in ${root})` : 'not found';
    return plain(res, 404, hint, headers);
  }
  if (extname(file) === '.html') {
    // a fresh style nonce per page (shared/ipc/style-nonce.ts): in the CSP header and in the page
    const nonce = randomBytes(16).toString('base64');
    const body = Buffer.from(fillStyleNonce(await readFile(file, 'utf8'), nonce));
    const csp = headers['Content-Security-Policy'];
    res.writeHead(200, {
      ...headers,
      ...(csp ? { 'Content-Security-Policy': cspWithStyleNonce(csp, nonce) } : {}),
      'Content-Type': TYPES['.html']!,
      'Content-Length': String(body.length),
    });
    res.end(body);
    return;
  }
  res.writeHead(200, {
    ...headers,
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
    'Content-Length': String(info.size),
  });
  // pipeline, not pipe: a file that vanished since stat (a rebuild) or a client that left must not throw or leak an fd
  pipeline(createReadStream(file), res, () => undefined);
}

export function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text + '\n');
}
