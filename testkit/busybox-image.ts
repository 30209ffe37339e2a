/**
 * OCI images built offline from Debian's static busybox, for image and container tests: a base layer with
 * /bin/busybox and its applets as symlinks (sh, httpd, sleep, echo, cat, ls, …), /etc/passwd and /etc/group, /tmp;
 * optionally a second layer with whiteouts (a deleted file and an opaque directory) to test layer application.
 * Layers come gzip'd, zstd'd or plain; images can be written as an OCI image layout (dir or tar) or a `docker save`
 * archive, or served by testkit/registry.ts (with an OCI index or a Docker manifest list over several platforms).
 * Everything is deterministic (fixed owners and mtimes, sorted entries), so digests only change with the busybox.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  linkSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const MT = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

export const BUSYBOX_APPLETS = [
  'sh',
  'httpd',
  'sleep',
  'echo',
  'cat',
  'ls',
  'id',
  'env',
  'pwd',
  'hostname',
  'wget',
  'nc',
  'ps',
  'mkdir',
  'rm',
  'touch',
  'true',
  'false',
  'test',
  'grep',
  'ip',
  'ifconfig',
  'kill',
  'mount',
  'head',
  'tail',
  'wc',
  'date',
  'uname',
  'whoami',
  'stat',
  'readlink',
  'chmod',
  'tee',
  'seq',
  'printf',
];
export const BUSYBOX_PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export type Compression = 'gzip' | 'zstd' | 'none';

export interface Blob {
  digest: string;
  mediaType: string;
  bytes: Buffer;
}

export interface BuiltImage {
  /** the config blob's digest = the image id */
  id: string;
  config: Blob;
  /** compressed (or plain) layer blobs, base first */
  layers: Blob[];
  /** uncompressed layer tars, base first (what docker save archives hold) */
  layerTars: Buffer[];
  diffIds: string[];
  manifest: Blob;
  os: string;
  architecture: string;
  variant?: string;
  /** every blob by digest (config + layers) */
  blobs: Map<string, Buffer>;
}

export interface BusyboxImageOptions {
  compression?: Compression;
  /** add the whiteout layer (see WHITEOUT_EXPECTATIONS) */
  whiteoutLayer?: boolean;
  /** 'docker' ⇒ Docker v2 schema 2 manifest and media types (gzip only) */
  format?: 'oci' | 'docker';
  /** default: this machine's (amd64 / arm64 …) */
  architecture?: string;
  variant?: string;
  busybox?: string;
  /** applet links in /bin (default BUSYBOX_APPLETS; critest's images want every applet: `busybox --list`) */
  applets?: string[];
  /** hard links for the applets, as the Docker Hub busybox image has (masking /bin/ls then masks only ls); default symlinks */
  hardlinkApplets?: boolean;
  cmd?: string[];
  entrypoint?: string[];
  env?: string[];
  workingDir?: string;
  user?: string;
  stopSignal?: string;
  exposedPorts?: string[];
  labels?: Record<string, string>;
  /** extra files in the base layer: path (no leading /) ⇒ content */
  files?: Record<string, string>;
  /** host files copied into the base layer: path (no leading /) ⇒ host path and mode (e.g. 0o4755 for a setuid test binary) */
  hostFiles?: Record<string, { from: string; mode: number }>;
}

/** What a rootfs with the whiteout layer applied must (not) contain. */
export const WHITEOUT_EXPECTATIONS = {
  /** present in layer 1, deleted by a `.wh.` file in layer 2 */
  deletedFile: 'etc/deleted-by-layer2',
  /** a directory whose layer-1 entries are hidden by an opaque marker in layer 2 */
  opaqueDir: 'var/opaque',
  hiddenByOpaque: ['var/opaque/from-layer1-a', 'var/opaque/from-layer1-b'],
  keptInOpaque: 'var/opaque/from-layer2',
  /** added by layer 2 */
  addedFile: 'etc/added-by-layer2',
  /** a whole directory of layer 1 deleted by a `.wh.` file in layer 2 */
  deletedDir: 'srv/gone',
} as const;

/** Symlinks in the base layer that must survive unpacking verbatim (both resolve to /bin/busybox in a container; named
 * sh because busybox picks the applet from argv[0]). */
export const SYMLINK_EXPECTATIONS = {
  absolute: { path: 'usr/bin/sh', target: '/bin/busybox' },
  climbing: { path: 'usr/local/bin/sh', target: '../../../../../bin/busybox' },
} as const;

export const sha256Hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
export const digestOf = (b: Buffer | string) => `sha256:${sha256Hex(b)}`;

export function hostArchitecture(): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    arm64: 'arm64',
    arm: 'arm',
    ia32: '386',
    ppc64: 'ppc64le',
    s390x: 's390x',
    riscv64: 'riscv64',
  };
  return map[process.arch] ?? process.arch;
}

function tarDir(dir: string): Buffer {
  return execFileSync(
    'tar',
    ['--numeric-owner', '--owner=0', '--group=0', '--mtime=@0', '--sort=name', '--format=gnu', '-C', dir, '-cf', '-', '.'],
    { maxBuffer: 256 * 1024 * 1024 },
  );
}

/** zstd via the zstd tool when present, else a valid frame of raw (stored) blocks that any decoder reads. */
export function zstdCompress(data: Buffer): Buffer {
  try {
    return execFileSync('zstd', ['-q', '-c', '-3'], { input: data, maxBuffer: 256 * 1024 * 1024 });
  } catch {
    const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from([0x00, 0x58])]; // magic; descriptor: no content size, no checksum; window log 10+11 = 2 MiB
    const max = 128 * 1024;
    for (let off = 0; off < data.length || off === 0; off += max) {
      const chunk = data.subarray(off, off + max);
      const last = off + max >= data.length ? 1 : 0;
      const header = (chunk.length << 3) | (0 << 1) | last; // Raw_Block
      parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff]), chunk);
      if (data.length === 0) break;
    }
    return Buffer.concat(parts);
  }
}

/** a tar's compressed forms already made in this process (the same layer tar object: see baseLayerOf) */
const compressedOf = new WeakMap<Buffer, Map<Compression, Buffer>>();

function compress(tar: Buffer, c: Compression): Buffer {
  if (c === 'none') return Buffer.from(tar);
  const done = compressedOf.get(tar) ?? new Map<Compression, Buffer>();
  compressedOf.set(tar, done);
  let bytes = done.get(c);
  if (!bytes) {
    // zlib's fastest level: these layers travel over loopback, and at the default level (6) the critest images'
    // layers (18 builds of a ~2 MiB busybox tar, each with its own files) took 3.5 CPU s of deflate per run
    bytes = c === 'gzip' ? gzipSync(tar, { level: 1 }) : zstdCompress(tar);
    done.set(c, bytes);
  }
  // a copy: a caller may change its image's bytes, never another's
  return Buffer.from(bytes);
}

/**
 * Base layer tars already built in this process, by what shapes them (the options below and the identity of every
 * host file copied in). The tar is deterministic (numeric owners, mtime 0, sorted), so an equal build gives equal
 * bytes; building one (a tar run forked from the test worker, then gzip) took ~150 ms of CPU, and the test files of
 * one worker and the critest images build the same busybox layer many times.
 */
const baseLayers = new Map<string, Buffer>();
/** the most recently used ones kept (a few MiB each: a larger worker makes each of its forks dearer) */
const BASE_LAYERS_KEPT = 4;

function fileIdentity(path: string): string {
  const st = statSync(path);
  return `${path}:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

function baseLayerOf(opts: BusyboxImageOptions, build: () => Buffer): Buffer {
  const key = JSON.stringify({
    busybox: fileIdentity(opts.busybox ?? '/bin/busybox'),
    applets: opts.applets ?? null,
    hardlinkApplets: opts.hardlinkApplets ?? false,
    files: opts.files ?? {},
    hostFiles: Object.entries(opts.hostFiles ?? {}).map(([path, f]) => [path, fileIdentity(f.from), f.mode]),
  });
  const tar = baseLayers.get(key) ?? build();
  baseLayers.delete(key);
  baseLayers.set(key, tar);
  for (const old of baseLayers.keys()) if (baseLayers.size > BASE_LAYERS_KEPT) baseLayers.delete(old);
  return tar;
}

function writeFile(root: string, rel: string, content: string, mode = 0o644): void {
  const p = join(root, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, content);
  chmodSync(p, mode);
}

function buildBaseLayer(work: string, opts: BusyboxImageOptions): Buffer {
  const root = join(work, 'layer1');
  for (const d of ['bin', 'etc', 'tmp', 'root', 'var/opaque', 'srv/gone', 'proc', 'sys', 'dev', 'www', 'usr/bin'])
    mkdirSync(join(root, d), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
  copyFileSync(opts.busybox ?? '/bin/busybox', join(root, 'bin/busybox'));
  chmodSync(join(root, 'bin/busybox'), 0o755);
  for (const applet of opts.applets ?? BUSYBOX_APPLETS) {
    if (applet === 'busybox') continue;
    if (opts.hardlinkApplets) linkSync(join(root, 'bin/busybox'), join(root, 'bin', applet));
    else symlinkSync('busybox', join(root, 'bin', applet));
  }
  writeFile(
    root,
    'etc/passwd',
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\nweb:x:1000:1000:web:/www:/bin/sh\n',
  );
  writeFile(root, 'etc/group', 'root:x:0:\nnogroup:x:65534:\nweb:x:1000:\nextra:x:2000:web\n');
  writeFile(root, 'www/index.html', 'hello from podscope busybox\n');
  writeFile(root, WHITEOUT_EXPECTATIONS.deletedFile, 'layer 1\n');
  for (const f of WHITEOUT_EXPECTATIONS.hiddenByOpaque) writeFile(root, f, 'layer 1\n');
  writeFile(root, `${WHITEOUT_EXPECTATIONS.deletedDir}/inside`, 'layer 1\n');
  for (const [path, content] of Object.entries(opts.files ?? {})) writeFile(root, path, content);
  for (const [path, f] of Object.entries(opts.hostFiles ?? {})) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    copyFileSync(f.from, join(root, path));
    chmodSync(join(root, path), f.mode);
  }
  // links real images have: an absolute target, and a relative one that climbs above the root (both fine in a container)
  mkdirSync(join(root, 'usr/local/bin'), { recursive: true }); // also makes usr/bin's parent
  symlinkSync(SYMLINK_EXPECTATIONS.absolute.target, join(root, SYMLINK_EXPECTATIONS.absolute.path));
  symlinkSync(SYMLINK_EXPECTATIONS.climbing.target, join(root, SYMLINK_EXPECTATIONS.climbing.path));
  return tarDir(root);
}

function buildWhiteoutLayer(work: string): Buffer {
  const root = join(work, 'layer2');
  const w = WHITEOUT_EXPECTATIONS;
  writeFile(root, `etc/.wh.${w.deletedFile.split('/').pop()}`, '');
  writeFile(root, `${w.opaqueDir}/.wh..wh..opq`, '');
  writeFile(root, w.keptInOpaque, 'layer 2\n');
  writeFile(root, w.addedFile, 'layer 2\n');
  writeFile(root, `srv/.wh.${w.deletedDir.split('/').pop()}`, '');
  return tarDir(root);
}

export function buildBusyboxImage(opts: BusyboxImageOptions = {}): BuiltImage {
  if ((opts.format ?? 'oci') === 'docker' && opts.compression === 'zstd') throw new Error('docker manifests have no zstd layer type');
  const work = mkdtempSync(join(tmpdir(), 'podscope-busybox-image-'));
  try {
    const tars = [baseLayerOf(opts, () => buildBaseLayer(work, opts))];
    if (opts.whiteoutLayer) tars.push(buildWhiteoutLayer(work));
    return assembleImage(
      tars,
      {
        Env: opts.env ?? [BUSYBOX_PATH_ENV],
        Cmd: opts.cmd ?? ['sh'],
        ...(opts.entrypoint && { Entrypoint: opts.entrypoint }),
        ...(opts.workingDir && { WorkingDir: opts.workingDir }),
        ...(opts.user && { User: opts.user }),
        ...(opts.stopSignal && { StopSignal: opts.stopSignal }),
        ...(opts.exposedPorts && { ExposedPorts: Object.fromEntries(opts.exposedPorts.map((p) => [p, {}])) }),
        ...(opts.labels && { Labels: opts.labels }),
      },
      opts,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A deterministic layer tar of a directory (root-owned entries, mtime 0, sorted). */
export function layerTarOf(dir: string): Buffer {
  return tarDir(dir);
}

/**
 * An image from uncompressed layer tars (base first) and its runtime config (OCI config.config): the layer blobs,
 * config and manifest with their digests.
 */
export function assembleImage(
  tars: Buffer[],
  runtimeConfig: object,
  opts: Pick<BusyboxImageOptions, 'compression' | 'format' | 'architecture' | 'variant'> = {},
): BuiltImage {
  const compression = opts.compression ?? 'gzip';
  const format = opts.format ?? 'oci';
  if (format === 'docker' && compression === 'zstd') throw new Error('docker manifests have no zstd layer type');
  const layerType =
    format === 'docker'
      ? MT.dockerLayerGzip
      : compression === 'gzip'
        ? MT.ociLayerGzip
        : compression === 'zstd'
          ? MT.ociLayerZstd
          : MT.ociLayer;
  const layers = tars.map((t) => {
    const bytes = compress(t, compression);
    return { digest: digestOf(bytes), mediaType: layerType, bytes };
  });
  const diffIds = tars.map((t) => digestOf(t));
  const architecture = opts.architecture ?? hostArchitecture();
  const configJson = {
    created: '1970-01-01T00:00:00Z',
    architecture,
    os: 'linux',
    ...(opts.variant && { variant: opts.variant }),
    config: runtimeConfig,
    rootfs: { type: 'layers', diff_ids: diffIds },
    history: tars.map((_, i) => ({ created: '1970-01-01T00:00:00Z', created_by: `podscope testkit layer ${i + 1}` })),
  };
  const configBytes = Buffer.from(JSON.stringify(configJson));
  const config: Blob = {
    digest: digestOf(configBytes),
    mediaType: format === 'docker' ? MT.dockerConfig : MT.ociConfig,
    bytes: configBytes,
  };
  const manifestType = format === 'docker' ? MT.dockerManifest : MT.ociManifest;
  const manifestBytes = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: manifestType,
      config: { mediaType: config.mediaType, digest: config.digest, size: configBytes.length },
      layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.bytes.length })),
    }),
  );
  const blobs = new Map<string, Buffer>([[config.digest, configBytes], ...layers.map((l) => [l.digest, l.bytes] as [string, Buffer])]);
  return {
    id: config.digest,
    config,
    layers,
    layerTars: tars,
    diffIds,
    manifest: { digest: digestOf(manifestBytes), mediaType: manifestType, bytes: manifestBytes },
    os: 'linux',
    architecture,
    ...(opts.variant && { variant: opts.variant }),
    blobs,
  };
}

/** An OCI index (or Docker manifest list) over per-platform images. */
export function buildIndex(images: BuiltImage[], format: 'oci' | 'docker' = 'oci'): Blob {
  const mediaType = format === 'docker' ? MT.dockerList : MT.ociIndex;
  const bytes = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      manifests: images.map((i) => ({
        mediaType: i.manifest.mediaType,
        digest: i.manifest.digest,
        size: i.manifest.bytes.length,
        platform: { os: i.os, architecture: i.architecture, ...(i.variant && { variant: i.variant }) },
      })),
    }),
  );
  return { digest: digestOf(bytes), mediaType, bytes };
}

/** An image whose platform is not this machine's, to put beside the real one in an index. */
export function foreignArchitecture(): string {
  return hostArchitecture() === 'amd64' ? 'arm64' : 'amd64';
}

/**
 * Writes an OCI image layout (oci-layout, index.json, blobs/sha256/…) to `dir`, or to a tar at `tarFile` when given.
 * Each entry is tagged with `org.opencontainers.image.ref.name` (and containerd's full-name annotation when the ref
 * is a full reference).
 */
export function writeOciLayout(target: { dir: string } | { tarFile: string }, entries: { image: BuiltImage; ref?: string }[]): string {
  const dir = 'dir' in target ? target.dir : mkdtempSync(join(tmpdir(), 'podscope-oci-layout-'));
  try {
    mkdirSync(join(dir, 'blobs/sha256'), { recursive: true });
    writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    const put = (b: { digest: string; bytes: Buffer }) => writeFileSync(join(dir, 'blobs/sha256', b.digest.slice(7)), b.bytes);
    for (const { image } of entries) {
      put(image.manifest);
      put(image.config);
      image.layers.forEach(put);
    }
    const index = {
      schemaVersion: 2,
      mediaType: MT.ociIndex,
      manifests: entries.map(({ image, ref }) => ({
        mediaType: image.manifest.mediaType,
        digest: image.manifest.digest,
        size: image.manifest.bytes.length,
        platform: { os: image.os, architecture: image.architecture },
        ...(ref && {
          annotations: {
            'org.opencontainers.image.ref.name': ref.includes('/') || ref.includes(':') ? ref.slice(ref.lastIndexOf(':') + 1) : ref,
            'io.containerd.image.name': ref,
          },
        }),
      })),
    };
    writeFileSync(join(dir, 'index.json'), JSON.stringify(index));
    if ('tarFile' in target) {
      execFileSync('tar', [
        '--numeric-owner',
        '--owner=0',
        '--group=0',
        '--mtime=@0',
        '--sort=name',
        '-C',
        dir,
        '-cf',
        target.tarFile,
        '.',
      ]);
      return target.tarFile;
    }
    return dir;
  } finally {
    if ('tarFile' in target) rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes a legacy `docker save` archive: manifest.json + <config hex>.json + <n>/layer.tar (uncompressed layers). */
export function writeDockerSave(tarFile: string, entries: { image: BuiltImage; repoTags: string[] }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'podscope-docker-save-'));
  try {
    const manifest = entries.map(({ image, repoTags }) => {
      const configName = `${image.id.slice(7)}.json`;
      writeFileSync(join(dir, configName), image.config.bytes);
      const layerNames = image.layerTars.map((t, i) => {
        const name = `${image.diffIds[i]!.slice(7)}/layer.tar`;
        mkdirSync(join(dir, dirname(name)), { recursive: true });
        if (!existsSync(join(dir, name))) writeFileSync(join(dir, name), t);
        return name;
      });
      return { Config: configName, RepoTags: repoTags, Layers: layerNames };
    });
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    execFileSync('tar', ['--numeric-owner', '--owner=0', '--group=0', '--mtime=@0', '--sort=name', '-C', dir, '-cf', tarFile, '.']);
    return tarFile;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads a blob back from a built image (handy in assertions). */
export function blobBytes(image: BuiltImage, digest: string): Buffer {
  const b = image.blobs.get(digest) ?? (image.manifest.digest === digest ? image.manifest.bytes : undefined);
  if (!b) throw new Error(`no blob ${digest}`);
  return b;
}

export const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
