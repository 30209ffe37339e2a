/**
 * The OCI distribution-spec pull side, written here because no maintained npm package does it properly (the
 * registry clients on npm are abandoned, Docker-Hub-only, or buffer whole blobs in memory): GET/HEAD
 * /v2/<name>/manifests/<ref> with an Accept for OCI index/manifest and Docker list/manifest, GET /v2/<name>/blobs/<digest>
 * streamed, and the auth dance of the Docker token spec: a 401 with `WWW-Authenticate: Bearer realm,service,scope` ⇒
 * GET realm?service&scope (basic credentials when given) ⇒ `token`/`access_token` as Bearer; a `Basic` challenge ⇒
 * basic credentials. HTTPS unless the registry is insecure (loopback by default, plus the engine's
 * `insecureRegistries`), then plain HTTP, as containerd does for hosts configured with an http:// server.
 */
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { PodscopeError } from '../../../shared/domain/errors';
import type { RegistryAuth } from './types';
import { isLoopbackRegistry, registryEndpointHost, tryParseReference, type ImageReference } from './reference';

export const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/** distribution's registry refuses to store manifests over 4 MiB, so a bigger answer is not a manifest: refused. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export interface RegistryClientOptions {
  insecureRegistries?: string[];
  /** registry host ⇒ endpoint origin (`http://127.0.0.1:5000`) to pull that host's images from (see parseRegistryMirror) */
  registryMirrors?: Record<string, string>;
  auth?: RegistryAuth;
  signal?: AbortSignal;
  /** how long a request may wait for its response headers (ms), default 60 s; bodies stream as long as they take */
  timeoutMs?: number;
}

interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** `Bearer realm="…",service="…",scope="…"` ⇒ scheme + params (quoted strings may hold commas). */
export function parseChallenge(header: string): Challenge | undefined {
  const m = /^\s*(\w+)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  const re = /([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?/g;
  let p: RegExpExecArray | null;
  while ((p = re.exec(m[2]!)) !== null) params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  return { scheme: m[1]!.toLowerCase(), params };
}

function credentials(auth: RegistryAuth | undefined): { user: string; pass: string } | undefined {
  if (!auth) return undefined;
  if (auth.username) return { user: auth.username, pass: auth.password ?? '' };
  if (auth.auth) {
    const text = Buffer.from(auth.auth, 'base64').toString('utf8');
    const i = text.indexOf(':');
    if (i < 0) throw new PodscopeError('InvalidArgument', 'auth.auth: must be base64 of "user:password"', { details: { field: 'auth' } });
    return { user: text.slice(0, i), pass: text.slice(i + 1) };
  }
  return undefined;
}

/**
 * `HOST=URL` (`--registry-mirror docker.io=http://127.0.0.1:5000`) ⇒ [host, origin]. The URL must be http(s) with no
 * path, query or credentials: it stands for the registry's `/v2/` root, so only an origin means one thing.
 */
export function parseRegistryMirror(text: string): [string, string] {
  const bad = (why: string) =>
    new PodscopeError('InvalidArgument', `--registry-mirror ${JSON.stringify(text)}: ${why}`, { details: { field: 'registryMirrors' } });
  const eq = text.indexOf('=');
  if (eq <= 0) throw bad('must be HOST=URL (docker.io=http://127.0.0.1:5000)');
  const host = text.slice(0, eq);
  const parsedHost = tryParseReference(`${host}/x/y`);
  if (!parsedHost || parsedHost.registry !== (host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host))
    throw bad(`${JSON.stringify(host)} is not a registry host`);
  let url: URL;
  try {
    url = new URL(text.slice(eq + 1));
  } catch {
    throw bad('the mirror is not a URL (an http:// or https:// origin)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('the mirror must be an http:// or https:// URL');
  if (url.username || url.password) throw bad('credentials do not belong in the mirror URL');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
    throw bad('the mirror URL must be an origin, without a path');
  return [parsedHost.registry, url.origin];
}

const basic = (c: { user: string; pass: string }) => `Basic ${Buffer.from(`${c.user}:${c.pass}`).toString('base64')}`;

export class RegistryClient {
  readonly baseUrl: string;
  private authorization: string | undefined;
  private readonly creds: { user: string; pass: string } | undefined;

  constructor(
    private readonly ref: ImageReference,
    private readonly opts: RegistryClientOptions = {},
  ) {
    const host = registryEndpointHost(ref.registry);
    const insecure =
      isLoopbackRegistry(ref.registry) ||
      (opts.insecureRegistries ?? []).includes(ref.registry) ||
      (opts.insecureRegistries ?? []).includes(host);
    // a mirror replaces the endpoint, not the name: the image keeps `registry.k8s.io/…` in its RepoTags, as with
    // containerd's hosts.toml `server` (docs/semantics.md#registry-mirrors)
    const mirror = opts.registryMirrors?.[ref.registry];
    this.baseUrl = mirror ?? `${insecure ? 'http' : 'https'}://${host}`;
    this.creds = credentials(opts.auth);
    if (opts.auth?.registryToken) this.authorization = `Bearer ${opts.auth.registryToken}`;
  }

  private where(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  /** One request with the auth dance: at most one challenge is answered per request. */
  private async request(path: string, init: { method?: string; accept?: string } = {}): Promise<Response> {
    const url = this.where(path);
    const send = async () => {
      const headers: Record<string, string> = {};
      if (init.accept) headers.Accept = init.accept;
      if (this.authorization) headers.Authorization = this.authorization;
      // the timeout covers the wait for the response headers only: a big layer may stream for longer than that
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), this.opts.timeoutMs ?? 60_000);
      const signal = this.opts.signal ? AbortSignal.any([this.opts.signal, timeout.signal]) : timeout.signal;
      try {
        return await fetch(url, { method: init.method ?? 'GET', headers, signal, redirect: 'follow' });
      } catch (e) {
        if (this.opts.signal?.aborted) throw new PodscopeError('Canceled', `pull canceled: ${init.method ?? 'GET'} ${url}`, { cause: e });
        if (timeout.signal.aborted)
          throw new PodscopeError(
            'DeadlineExceeded',
            `registry ${this.ref.registry} did not answer ${init.method ?? 'GET'} ${url} in time`,
            { cause: e },
          );
        const cause = (e as { cause?: { code?: string; message?: string } }).cause;
        throw new PodscopeError(
          'Unavailable',
          `registry ${this.ref.registry} unreachable (${init.method ?? 'GET'} ${url}): ${cause?.code ?? cause?.message ?? (e as Error).message}`,
          { cause: e },
        );
      } finally {
        clearTimeout(timer);
      }
    };
    let res = await send();
    if (res.status === 401) {
      const header = res.headers.get('www-authenticate') ?? '';
      await res.body?.cancel().catch(() => undefined);
      const challenge = parseChallenge(header);
      if (!challenge)
        throw new PodscopeError(
          'FailedPrecondition',
          `registry ${this.ref.registry}: 401 without a usable WWW-Authenticate challenge for ${url}`,
        );
      await this.answer(challenge);
      res = await send();
      if (res.status === 401) {
        await res.body?.cancel().catch(() => undefined);
        throw new PodscopeError(
          'FailedPrecondition',
          `registry ${this.ref.registry}: unauthorized for ${this.ref.repository}${this.creds ? ` as ${this.creds.user}` : ' (no credentials given)'}`,
          { details: { url, status: 401 } },
        );
      }
    }
    return res;
  }

  private async answer(c: Challenge): Promise<void> {
    if (c.scheme === 'basic') {
      if (!this.creds)
        throw new PodscopeError('FailedPrecondition', `registry ${this.ref.registry} requires basic auth and no credentials were given`);
      this.authorization = basic(this.creds);
      return;
    }
    if (c.scheme !== 'bearer')
      throw new PodscopeError('FailedPrecondition', `registry ${this.ref.registry}: unsupported auth scheme ${c.scheme}`);
    const realm = c.params.realm;
    if (!realm) throw new PodscopeError('FailedPrecondition', `registry ${this.ref.registry}: Bearer challenge without a realm`);
    let tokenUrl: URL;
    try {
      tokenUrl = new URL(realm);
    } catch {
      throw new PodscopeError('FailedPrecondition', `registry ${this.ref.registry}: Bearer realm ${JSON.stringify(realm)} is not a URL`);
    }
    if (c.params.service) tokenUrl.searchParams.set('service', c.params.service);
    tokenUrl.searchParams.set('scope', c.params.scope ?? `repository:${this.ref.repository}:pull`);
    const headers: Record<string, string> = {};
    if (this.creds) headers.Authorization = basic(this.creds);
    const signal = this.opts.signal
      ? AbortSignal.any([this.opts.signal, AbortSignal.timeout(this.opts.timeoutMs ?? 60_000)])
      : AbortSignal.timeout(this.opts.timeoutMs ?? 60_000);
    let res: Response;
    try {
      res = await fetch(tokenUrl, { headers, signal });
    } catch (e) {
      throw new PodscopeError('Unavailable', `token service ${tokenUrl.origin} unreachable: ${(e as Error).message}`, { cause: e });
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new PodscopeError(
        'FailedPrecondition',
        `registry ${this.ref.registry}: token service answered ${res.status}${this.creds ? ` for user ${this.creds.user}` : ' (no credentials given)'}`,
        { details: { realm, status: res.status } },
      );
    }
    const body = (await res.json().catch(() => ({}))) as { token?: unknown; access_token?: unknown };
    const token =
      typeof body.token === 'string' && body.token ? body.token : typeof body.access_token === 'string' ? body.access_token : '';
    if (!token) throw new PodscopeError('FailedPrecondition', `registry ${this.ref.registry}: token service returned no token`);
    this.authorization = `Bearer ${token}`;
  }

  private async failure(res: Response, what: string): Promise<PodscopeError> {
    const text = await res.text().catch(() => '');
    let detail = text.slice(0, 300);
    try {
      const j = JSON.parse(text) as { errors?: { code?: string; message?: string }[] };
      if (j.errors?.length) detail = j.errors.map((e) => `${e.code ?? ''} ${e.message ?? ''}`.trim()).join('; ');
    } catch {
      // not JSON: keep the text
    }
    const code = res.status === 404 ? 'NotFound' : res.status === 429 || res.status >= 500 ? 'Unavailable' : 'FailedPrecondition';
    return new PodscopeError(code, `${what}: registry ${this.ref.registry} answered ${res.status}${detail ? ` (${detail})` : ''}`, {
      details: { status: res.status },
    });
  }

  /** The manifest (or index) bytes and media type for a tag or digest. */
  async getManifest(reference: string): Promise<{ bytes: Buffer; mediaType: string; digestHeader?: string }> {
    const path = `/v2/${this.ref.repository}/manifests/${reference}`;
    const res = await this.request(path, { accept: MANIFEST_ACCEPT });
    if (!res.ok) throw await this.failure(res, `manifest ${this.ref.name}:${reference}`);
    const length = Number(res.headers.get('content-length') ?? '0');
    if (length > MAX_MANIFEST_BYTES)
      throw new PodscopeError('FailedPrecondition', `manifest ${reference} is ${length} bytes, over the ${MAX_MANIFEST_BYTES} limit`);
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > MAX_MANIFEST_BYTES)
      throw new PodscopeError('FailedPrecondition', `manifest ${reference} is over the ${MAX_MANIFEST_BYTES} byte limit`);
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    return { bytes, mediaType, digestHeader: res.headers.get('docker-content-digest') ?? undefined };
  }

  /** A blob as a stream (the caller verifies its digest); `size` from Content-Length when sent. */
  async getBlob(digest: string): Promise<{ stream: Readable; size?: number }> {
    const res = await this.request(`/v2/${this.ref.repository}/blobs/${digest}`);
    if (!res.ok || !res.body) throw await this.failure(res, `blob ${digest}`);
    const len = res.headers.get('content-length');
    const src = Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>);
    // a registry that stops sending mid-blob fails the pull after the same wait as for headers, instead of hanging it
    const idleMs = this.opts.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      const err = new PodscopeError(
        'DeadlineExceeded',
        `blob ${digest}: no data from registry ${this.ref.registry} for ${Math.round(idleMs / 1000)} s`,
      );
      src.destroy(err);
      watch.destroy(err);
    }, idleMs);
    const watch = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        timer.refresh();
        cb(null, chunk);
      },
    });
    watch.once('close', () => {
      clearTimeout(timer);
      src.destroy(); // a consumer that stops early (config size limit, failure) must not leave the body open
    });
    src.once('error', (e) => watch.destroy(e));
    src.pipe(watch);
    return { stream: watch, ...(len && { size: Number(len) }) };
  }
}
