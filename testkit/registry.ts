/**
 * A small OCI distribution registry for tests, on 127.0.0.1 over plain HTTP (test code, hand-written):
 * GET/HEAD /v2/, /v2/<name>/manifests/<tag|digest>, /v2/<name>/blobs/<digest>; optional Docker token auth (401 with
 * `WWW-Authenticate: Bearer realm=…,service=…,scope=…`, a token endpoint taking basic credentials) or plain basic
 * auth. Serves what tests put in: single images or an index / manifest list with per-platform manifests. Blobs can be
 * corrupted on the wire to test digest verification, and every request is recorded (method, path, headers).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { buildIndex, type Blob, type BuiltImage } from './busybox-image';

export interface RegistryAuthOptions {
  kind: 'token' | 'basic';
  username: string;
  password: string;
}

export interface TestRegistryOptions {
  /** 0 (default) ⇒ any free port */
  port?: number;
  /** try port, port+1, … up to this many times when it is taken (default 1) */
  portAttempts?: number;
  auth?: RegistryAuthOptions;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
}

export interface TestRegistry {
  /** `127.0.0.1:<port>` — the registry host part of image refs */
  readonly host: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** tokens the token endpoint handed out */
  readonly issuedTokens: string[];
  /** serves one image under name:tag (and by manifest digest) */
  putImage(name: string, tag: string, image: BuiltImage): void;
  /** serves an index (OCI) or manifest list (docker) over the images under name:tag; returns the index blob */
  putIndex(name: string, tag: string, images: BuiltImage[], format?: 'oci' | 'docker'): Blob;
  /** serves raw manifest bytes with the given media type under name:tag (for malformed-manifest tests) */
  putRawManifest(name: string, tag: string, mediaType: string, bytes: Buffer): string;
  /** serves a raw blob (by its declared digest, whatever the bytes) */
  putBlob(name: string, digest: string, bytes: Buffer): void;
  /** from now on the blob is served with one byte flipped (its digest no longer matches) */
  corruptBlob(digest: string): void;
  close(): Promise<void>;
}

interface Repo {
  manifests: Map<string, { mediaType: string; bytes: Buffer; digest: string }>;
  blobs: Map<string, Buffer>;
}

function parseBasic(header: string | undefined): { user: string; pass: string } | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const text = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const i = text.indexOf(':');
  return i < 0 ? undefined : { user: text.slice(0, i), pass: text.slice(i + 1) };
}

export async function startTestRegistry(opts: TestRegistryOptions = {}): Promise<TestRegistry> {
  const repos = new Map<string, Repo>();
  const corrupted = new Set<string>();
  const requests: RecordedRequest[] = [];
  const issuedTokens: string[] = [];
  const auth = opts.auth;
  let host = '';

  const repo = (name: string): Repo => {
    let r = repos.get(name);
    if (!r) repos.set(name, (r = { manifests: new Map(), blobs: new Map() }));
    return r;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', `http://${host}`);
    const send = (status: number, body: Buffer | string = '', headers: Record<string, string> = {}) => {
      requests.push({ method: req.method ?? '', path: url.pathname + url.search, headers: { ...req.headers }, status });
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      res.writeHead(status, { 'Content-Length': String(bytes.length), ...headers });
      res.end(req.method === 'HEAD' ? undefined : bytes);
    };
    const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
      send(status, JSON.stringify({ errors: [{ code, message }] }), { 'Content-Type': 'application/json', ...headers });

    if (url.pathname === '/token') {
      const creds = parseBasic(req.headers.authorization);
      if (!auth || auth.kind !== 'token') return error(404, 'NOT_FOUND', 'no token service');
      if (!creds || creds.user !== auth.username || creds.pass !== auth.password) return error(401, 'UNAUTHORIZED', 'bad credentials');
      const token = randomBytes(16).toString('hex');
      issuedTokens.push(token);
      return send(200, JSON.stringify({ token, access_token: token, expires_in: 300 }), { 'Content-Type': 'application/json' });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return error(405, 'UNSUPPORTED', 'read-only test registry');

    const m = /^\/v2\/(?:(.+)\/(manifests|blobs)\/([^/]+))?\/?$/.exec(url.pathname);
    if (!m) return error(404, 'NOT_FOUND', 'unknown path');
    if (auth) {
      const scope = m[1] ? `repository:${m[1]}:pull` : '';
      const h = req.headers.authorization;
      const ok =
        auth.kind === 'token'
          ? h?.startsWith('Bearer ') === true && issuedTokens.includes(h.slice(7))
          : (() => {
              const c = parseBasic(h);
              return c?.user === auth.username && c.pass === auth.password;
            })();
      if (!ok) {
        const challenge =
          auth.kind === 'token'
            ? `Bearer realm="http://${host}/token",service="podscope-testkit"${scope ? `,scope="${scope}"` : ''}`
            : 'Basic realm="podscope-testkit"';
        return error(401, 'UNAUTHORIZED', 'authentication required', { 'WWW-Authenticate': challenge });
      }
    }
    if (!m[1]) return send(200, '{}', { 'Content-Type': 'application/json', 'Docker-Distribution-API-Version': 'registry/2.0' });
    const r = repos.get(m[1]);
    if (!r) return error(404, 'NAME_UNKNOWN', `repository ${m[1]} not known`);
    if (m[2] === 'manifests') {
      const man = r.manifests.get(m[3]!);
      if (!man) return error(404, 'MANIFEST_UNKNOWN', `manifest ${m[3]} not known`);
      return send(200, man.bytes, { 'Content-Type': man.mediaType, 'Docker-Content-Digest': man.digest });
    }
    const blob = r.blobs.get(m[3]!);
    if (!blob) return error(404, 'BLOB_UNKNOWN', `blob ${m[3]} not known`);
    let bytes = blob;
    if (corrupted.has(m[3]!)) {
      bytes = Buffer.from(blob);
      bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
    }
    return send(200, bytes, { 'Content-Type': 'application/octet-stream', 'Docker-Content-Digest': m[3]! });
  };

  const server: Server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (e) {
      res.writeHead(500);
      res.end(String(e));
    }
  });
  const attempts = Math.max(1, opts.portAttempts ?? 1);
  let port = 0;
  for (let i = 0; ; i++) {
    const want = opts.port ? opts.port + i : 0;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(want, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      port = (server.address() as AddressInfo).port;
      break;
    } catch (e) {
      if (i + 1 >= attempts || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    }
  }
  host = `127.0.0.1:${port}`;

  const putManifest = (name: string, tag: string, blob: Blob) => {
    const entry = { mediaType: blob.mediaType, bytes: blob.bytes, digest: blob.digest };
    repo(name).manifests.set(tag, entry);
    repo(name).manifests.set(blob.digest, entry);
  };
  const putImageBlobs = (name: string, image: BuiltImage) => {
    for (const [d, b] of image.blobs) repo(name).blobs.set(d, b);
    repo(name).manifests.set(image.manifest.digest, { ...image.manifest });
  };

  return {
    host,
    port,
    requests,
    issuedTokens,
    putImage(name, tag, image) {
      putImageBlobs(name, image);
      putManifest(name, tag, image.manifest);
    },
    putIndex(name, tag, images, format = 'oci') {
      for (const image of images) putImageBlobs(name, image);
      const index = buildIndex(images, format);
      putManifest(name, tag, index);
      return index;
    },
    putRawManifest(name, tag, mediaType, bytes) {
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      putManifest(name, tag, { mediaType, bytes, digest });
      return digest;
    },
    putBlob(name, digest, bytes) {
      repo(name).blobs.set(digest, bytes);
    },
    corruptBlob(digest) {
      corrupted.add(digest);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
