/**
 * The pure parts of the image store: reference normalization (Docker/containerd rules), WWW-Authenticate parsing,
 * platform selection, document validation naming the field, and zstd stream decoding (the store itself: image-store.test.ts).
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseReference, isLoopbackRegistry, registryEndpointHost } from '../../electron/engine/images/reference';
import { parseChallenge, parseRegistryMirror, RegistryClient } from '../../electron/engine/images/registry-client';
import { engineOptionsFromFlags } from '../../electron/core/engine-flags';
import { hostPlatform, pickManifest } from '../../electron/engine/images/platform';
import { zstdDecompressStream } from '../../electron/engine/images/unpack';
import { describeZodError, ImageConfigSchema, manifestMediaTypeProblem, ManifestSchema } from '../../shared/domain/image-spec';
import { hasCode } from '../../shared/domain/errors';
import { humanSize, repoAndTag } from '../../electron/cli/format';
import { userFromImage } from '../../electron/cri/server/image-service';
import { zstdCompress } from '../../testkit/busybox-image';

describe('image references', () => {
  it('normalizes like distribution/reference: docker.io/library for bare names, :latest by default', () => {
    expect(parseReference('busybox').canonical).toBe('docker.io/library/busybox:latest');
    expect(parseReference('user/app:1.0').canonical).toBe('docker.io/user/app:1.0');
    expect(parseReference('127.0.0.1:5000/busybox:1').canonical).toBe('127.0.0.1:5000/busybox:1');
    expect(parseReference('localhost/a/b').canonical).toBe('localhost/a/b:latest');
    expect(parseReference('quay.io/x/y@sha256:' + 'a'.repeat(64))).toMatchObject({
      registry: 'quay.io',
      repository: 'x/y',
      digest: `sha256:${'a'.repeat(64)}`,
      tag: undefined,
    });
    expect(parseReference('index.docker.io/library/busybox').name).toBe('docker.io/library/busybox');
    expect(registryEndpointHost('docker.io')).toBe('registry-1.docker.io');
  });

  it('refuses bad references naming what is wrong', () => {
    for (const [ref, why] of [
      ['Busybox', 'lowercase'],
      ['busybox:', 'tag'],
      ['a@sha256:12', 'digest'],
      ['', 'empty'],
    ] as const) {
      let err: unknown;
      try {
        parseReference(ref);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'InvalidArgument')).toBe(true);
      expect((err as Error).message).toContain(why);
    }
  });

  it('treats loopback registries as insecure (plain HTTP), others as HTTPS unless configured', () => {
    expect(isLoopbackRegistry('127.0.0.1:5000')).toBe(true);
    expect(isLoopbackRegistry('localhost:5000')).toBe(true);
    expect(isLoopbackRegistry('[::1]:5000')).toBe(true);
    expect(isLoopbackRegistry('registry.example:5000')).toBe(false);
    expect(new RegistryClient(parseReference('127.0.0.1:5000/a')).baseUrl).toBe('http://127.0.0.1:5000');
    expect(new RegistryClient(parseReference('busybox')).baseUrl).toBe('https://registry-1.docker.io');
    expect(new RegistryClient(parseReference('reg.lan:5000/a'), { insecureRegistries: ['reg.lan:5000'] }).baseUrl).toBe(
      'http://reg.lan:5000',
    );
  });

  it('a registry mirror replaces the endpoint but not the name (containerd hosts.toml server), so critest images resolve offline', () => {
    const mirrors = { 'registry.k8s.io': 'http://127.0.0.1:5000', 'docker.io': 'https://mirror.lan' };
    const k8s = parseReference('registry.k8s.io/e2e-test-images/busybox:1.29-2');
    expect(new RegistryClient(k8s, { registryMirrors: mirrors }).baseUrl).toBe('http://127.0.0.1:5000');
    expect(k8s.canonical).toBe('registry.k8s.io/e2e-test-images/busybox:1.29-2');
    expect(new RegistryClient(parseReference('busybox'), { registryMirrors: mirrors }).baseUrl).toBe('https://mirror.lan');
    expect(new RegistryClient(parseReference('gcr.io/a/b'), { registryMirrors: mirrors }).baseUrl).toBe('https://gcr.io');
  });

  it('--registry-mirror takes HOST=origin and refuses what would mean something else, naming the flag', () => {
    expect(parseRegistryMirror('docker.io=http://127.0.0.1:5000/')).toEqual(['docker.io', 'http://127.0.0.1:5000']);
    expect(parseRegistryMirror('index.docker.io=https://m.lan')).toEqual(['docker.io', 'https://m.lan']);
    expect(
      engineOptionsFromFlags({ 'registry-mirror': ['gcr.io=http://127.0.0.1:1', 'localhost:5000=http://[::1]:2'] }).registryMirrors,
    ).toEqual({
      'gcr.io': 'http://127.0.0.1:1',
      'localhost:5000': 'http://[::1]:2',
    });
    for (const [text, why] of [
      ['docker.io', 'HOST=URL'],
      ['=http://x', 'HOST=URL'],
      ['Bad_Host!=http://x', 'not a registry host'],
      ['docker.io/library=http://x', 'not a registry host'],
      ['docker.io=127.0.0.1:5000', 'http:// or https://'], // no scheme: a bare host:port is not taken as a URL
      ['docker.io=ftp://x', 'http:// or https://'],
      ['docker.io=http://u:p@x', 'credentials'],
      ['docker.io=http://x/v2', 'without a path'],
      ['docker.io=not a url', 'not a URL'],
    ]) {
      let err: unknown;
      try {
        parseRegistryMirror(text!);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'InvalidArgument'), text).toBe(true);
      expect((err as Error).message).toContain('--registry-mirror');
      expect((err as Error).message).toContain(why);
    }
  });
});

describe('WWW-Authenticate challenges (Docker token spec)', () => {
  it('parses Bearer realm/service/scope with quoted commas', () => {
    const c = parseChallenge(
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull,push"',
    );
    expect(c).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/busybox:pull,push' },
    });
    expect(parseChallenge('Basic realm="Registry Realm"')).toEqual({ scheme: 'basic', params: { realm: 'Registry Realm' } });
  });
});

describe('platform selection', () => {
  const d = (architecture: string, variant?: string) => ({
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    digest: `sha256:${(architecture + (variant ?? '')).padEnd(64, '0').replace(/[^a-f0-9]/g, '0')}`,
    size: 1,
    platform: { os: 'linux', architecture, ...(variant && { variant }) },
  });
  it("picks this machine's os/arch and names what the index has when nothing matches", () => {
    const me = hostPlatform();
    const hit = pickManifest([d('s390x'), d(me.architecture, me.variant)]);
    expect(hit.platform?.architecture).toBe(me.architecture);
    let err: unknown;
    try {
      pickManifest([d('s390x'), d('mips64le')]);
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'NotFound')).toBe(true);
    expect((err as Error).message).toContain('linux/s390x, linux/mips64le');
  });
  it('accepts an arm64 entry without a variant for arm64/v8', () => {
    expect(pickManifest([d('amd64'), d('arm64')], { os: 'linux', architecture: 'arm64', variant: 'v8' }).platform?.architecture).toBe(
      'arm64',
    );
  });
});

describe('image documents', () => {
  it('names the field of a bad manifest or config', () => {
    const r = ManifestSchema.safeParse({ schemaVersion: 2, config: { mediaType: 'x', digest: 'sha256:zz', size: 1 }, layers: [] });
    expect(r.success).toBe(false);
    expect(describeZodError('manifest', r.error!)).toContain('manifest.config.digest');
    const ok = ManifestSchema.parse({
      schemaVersion: 2,
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: `sha256:${'a'.repeat(64)}`, size: 1 },
      layers: [{ mediaType: 'text/plain', digest: `sha256:${'b'.repeat(64)}`, size: 2 }],
    });
    expect(manifestMediaTypeProblem(ok)).toBe('manifest.layers[0].mediaType: unsupported layer media type "text/plain"');
    const c = ImageConfigSchema.safeParse({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: ['nope'] } });
    expect(describeZodError('config', c.error!)).toContain('config.rootfs.diff_ids[0]');
    // Docker writes null for empty lists; that is not an error
    expect(
      ImageConfigSchema.parse({
        architecture: 'amd64',
        os: 'linux',
        config: { Env: null, Cmd: ['sh'] },
        rootfs: { type: 'layers', diff_ids: [] },
      }).config,
    ).toMatchObject({ Cmd: ['sh'] });
  });
});

describe('zstd layer streams', () => {
  it('decodes what the zstd tool writes, across chunk boundaries', async () => {
    const data = Buffer.from(Array.from({ length: 200_000 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join(''));
    const z = zstdCompress(data);
    const chunks = [];
    for (let i = 0; i < z.length; i += 1000) chunks.push(z.subarray(i, i + 1000));
    const out: Buffer[] = [];
    for await (const c of Readable.from(chunks).pipe(zstdDecompressStream())) out.push(c as Buffer);
    expect(Buffer.concat(out).equals(data)).toBe(true);
  });
});

describe('CLI and CRI formatting', () => {
  it('prints sizes as crictl (go-units HumanSize) and splits repo:tag', () => {
    expect(humanSize(1_053_162)).toBe('1.053MB');
    expect(humanSize(999)).toBe('999B');
    expect(humanSize(4_400_000_000)).toBe('4.4GB');
    expect(repoAndTag('127.0.0.1:5000/busybox:1')).toEqual(['127.0.0.1:5000/busybox', '1']);
    expect(repoAndTag('127.0.0.1:5000/busybox')).toEqual(['127.0.0.1:5000/busybox', '<none>']);
  });
  it('takes uid or username from the config User like containerd (user part before ":")', () => {
    expect(userFromImage('1000:1000')).toEqual({ uid: '1000', username: '' });
    expect(userFromImage('web')).toEqual({ username: 'web' });
    expect(userFromImage('')).toEqual({ username: '' });
  });
});
