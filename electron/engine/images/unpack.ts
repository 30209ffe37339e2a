/**
 * One layer blob ⇒ a directory overlayfs can stack: decompress (gzip via node:zlib, zstd via fzstd since Node 20 has
 * no zstd, or none), hash the uncompressed tar on the way (its sha256 is the diffID the config promises), and extract
 * with node-tar, which refuses absolute paths, `..` and writes through symlinks.
 *
 * Whiteouts are converted to overlayfs's own format at unpack time (the choice: each layer is unpacked once and shared
 * by every image that has it, so it must be a self-contained overlay lower dir): `.wh.<name>` ⇒ a 0/0 character device
 * `<name>`, `.wh..wh..opq` ⇒ the `trusted.overlay.opaque=y` xattr on its directory (OCI image-spec layer.md
 * "Whiteouts"; containerd's archive/tar_opts_linux.go does the same for its overlay snapshotter). Both go through the
 * OverlayMarks touch point (mknod / setxattr need root and tools Node lacks).
 */
import { createReadStream, createWriteStream, lchownSync, lstatSync, mkdirSync, rmSync, symlinkSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Transform, type TransformCallback, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Decompress } from 'fzstd';
import { Unpack } from 'tar';
import { PodscopeError } from '../../../shared/domain/errors';
import type { LayerCompression } from '../../../shared/domain/image-spec';
import { HashingStream } from './hashing';
import type { OverlayMarks } from './overlay';

/** fzstd's streaming decompressor as a Node Transform. */
export function zstdDecompressStream(): Transform {
  const out: Buffer[] = [];
  // copy: fzstd may hand out views of a window it reuses
  const decoder = new Decompress((data) => {
    if (data.length) out.push(Buffer.from(data));
  });
  const drain = (t: Transform) => {
    for (const b of out.splice(0)) t.push(b);
  };
  const t: Transform = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      try {
        decoder.push(chunk);
        drain(t);
        cb();
      } catch (e) {
        cb(new PodscopeError('InvalidArgument', `zstd: ${(e as Error).message}`));
      }
    },
    flush(cb: TransformCallback) {
      try {
        decoder.push(new Uint8Array(0), true);
        drain(t);
        cb();
      } catch (e) {
        cb(new PodscopeError('InvalidArgument', `zstd: ${(e as Error).message}`));
      }
    },
  });
  return t;
}

export function decompressStream(c: LayerCompression): Transform {
  if (c === 'gzip') return createGunzip();
  if (c === 'zstd') return zstdDecompressStream();
  return new PassThrough();
}

/** Looks at the magic bytes (for `docker save` layers, whose compression no media type declares). */
export async function sniffCompression(file: string): Promise<LayerCompression> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(4);
    const { bytesRead } = await fh.read(buf, 0, 4, 0);
    if (bytesRead >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) return 'gzip';
    if (bytesRead === 4 && buf.readUInt32LE(0) === 0xfd2fb528) return 'zstd';
    return 'none';
  } finally {
    await fh.close();
  }
}

/** `./a/b/.wh.c` ⇒ ['a','b','.wh.c']; refuses `..` (node-tar refuses those entries too, but whiteouts are ours). */
function safeParts(path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..'))
    throw new PodscopeError('InvalidArgument', `layer entry ${JSON.stringify(path)} escapes the layer root`);
  return parts;
}

/** Creates the parent dirs of a whiteout, refusing to go through a symlink the layer planted. */
async function ensureRealDir(root: string, parts: string[]): Promise<string> {
  let dir = root;
  for (const p of parts) {
    dir = join(dir, p);
    const st = await lstat(dir).catch(() => undefined);
    if (!st) await mkdir(dir, { mode: 0o755 });
    else if (!st.isDirectory())
      throw new PodscopeError('InvalidArgument', `layer whiteout under ${JSON.stringify(parts.join('/'))}: ${p} is not a directory`);
  }
  return dir;
}

/** A symlink at `path` (inside root) pointing at `target` verbatim; parents are real directories, never symlinks. */
function placeSymlink(root: string, path: string, target: string, uid?: number, gid?: number): void {
  const parts = safeParts(path);
  const name = parts.pop();
  if (!name || !target) throw new Error('empty name or target');
  let dir = root;
  for (const p of parts) {
    dir = join(dir, p);
    let st: Stats | undefined;
    try {
      st = lstatSync(dir);
    } catch {
      mkdirSync(dir, { mode: 0o755 });
      continue;
    }
    if (!st.isDirectory()) throw new Error(`${p} is not a directory`);
  }
  const at = join(dir, name);
  rmSync(at, { recursive: true, force: true });
  symlinkSync(target, at);
  if (uid !== undefined && gid !== undefined && process.getuid?.() === 0) lchownSync(at, uid, gid);
}

export interface UnpackInput {
  /** the compressed blob on disk, already digest-verified */
  blobPath: string;
  compression: LayerCompression;
  /** the config's rootfs.diff_ids entry for this layer */
  expectDiffId: string;
  /** for error messages: e.g. "layer 1 (sha256:…)" */
  label: string;
  /** an empty directory to extract into */
  target: string;
  marks: OverlayMarks;
  signal?: AbortSignal;
  onBytes?: (n: number) => void;
}

/**
 * node-tar's extractor for one layer: whiteout entries are collected (not extracted), symlinks are placed verbatim,
 * warnings are kept (at most 20).
 */
function layerExtractor(target: string, whiteouts: string[], warnings: string[]): Unpack {
  return new Unpack({
    cwd: target,
    preserveOwner: true,
    chmod: true,
    processUmask: 0,
    maxDepth: 4096,
    filter: (path: string, entry: unknown) => {
      const base = path.slice(path.lastIndexOf('/') + 1);
      if (base.startsWith('.wh.')) {
        whiteouts.push(path);
        return false;
      }
      const e = entry as { type?: string; linkpath?: string; uid?: number; gid?: number };
      if (e.type === 'SymbolicLink') {
        // node-tar would strip the "/" from absolute targets and drop targets that climb above the layer root; in a
        // container both are ordinary (/etc/localtime -> /usr/share/zoneinfo/…), since a symlink's target is only
        // resolved inside the container's root. So symlinks are created verbatim here, never followed.
        try {
          placeSymlink(target, path, e.linkpath ?? '', e.uid, e.gid);
        } catch (err) {
          if (warnings.length < 20) warnings.push(`symlink ${path}: ${(err as Error).message}`);
        }
        return false;
      }
      return true;
    },
    onwarn: (code: string, message: string) => {
      if (warnings.length < 20) warnings.push(`${code}: ${message}`);
    },
  });
}

/** Turns the layer's whiteout entries into overlayfs marks (an opaque dir, or a whiteout in place of a deleted path). */
async function applyWhiteouts(target: string, whiteouts: string[], marks: OverlayMarks): Promise<void> {
  for (const path of whiteouts) {
    const parts = safeParts(path);
    const name = parts.pop()!;
    const dir = await ensureRealDir(target, parts);
    if (name === '.wh..wh..opq') {
      await marks.opaque(dir);
    } else {
      const victim = join(dir, name.slice(4));
      await rm(victim, { recursive: true, force: true });
      await marks.whiteout(victim);
    }
  }
}

/** Extracts the layer; returns the uncompressed size. Throws (leaving `target` for the caller to delete) on mismatch. */
export async function unpackLayer(input: UnpackInput): Promise<{ size: number; whiteouts: number; warnings: string[] }> {
  const whiteouts: string[] = [];
  const warnings: string[] = [];
  const hasher = new HashingStream(input.onBytes);
  const unpack = layerExtractor(input.target, whiteouts, warnings);
  const done = new Promise<void>((resolve, reject) => {
    unpack.on('close', () => resolve());
    unpack.on('error', (e: Error) => reject(e));
  });
  try {
    await pipeline(
      createReadStream(input.blobPath),
      decompressStream(input.compression),
      hasher,
      unpack as unknown as NodeJS.WritableStream,
      { signal: input.signal },
    );
    await done;
  } catch (e) {
    if (input.signal?.aborted) throw new PodscopeError('Canceled', `unpacking ${input.label} canceled`, { cause: e });
    throw new PodscopeError('InvalidArgument', `${input.label}: cannot unpack (${input.compression}): ${(e as Error).message}`, {
      cause: e,
    });
  }
  const diffId = hasher.digest();
  if (diffId !== input.expectDiffId) {
    throw new PodscopeError(
      'FailedPrecondition',
      `${input.label}: uncompressed digest ${diffId} does not match config rootfs.diff_ids entry ${input.expectDiffId}`,
      { details: { field: 'rootfs.diff_ids', expected: input.expectDiffId, actual: diffId } },
    );
  }
  await applyWhiteouts(input.target, whiteouts, input.marks);
  return { size: hasher.bytes, whiteouts: whiteouts.length, warnings };
}

/** Streams a source into a file while hashing; throws naming the digest when it does not match. */
export async function receiveBlob(input: {
  source: Readable;
  file: string;
  expectDigest: string;
  expectSize?: number;
  label: string;
  signal?: AbortSignal;
  onBytes?: (n: number) => void;
}): Promise<number> {
  const hasher = new HashingStream(input.onBytes);
  try {
    await pipeline(input.source, hasher, createWriteStream(input.file, { mode: 0o644 }), { signal: input.signal });
  } catch (e) {
    if (input.signal?.aborted) throw new PodscopeError('Canceled', `${input.label}: download canceled`, { cause: e });
    throw new PodscopeError('Unavailable', `${input.label}: download failed: ${(e as Error).message}`, { cause: e });
  }
  const actual = hasher.digest();
  if (actual !== input.expectDigest) {
    throw new PodscopeError(
      'FailedPrecondition',
      `${input.label}: content digest ${actual} does not match the expected ${input.expectDigest}; nothing was stored`,
      { details: { field: 'digest', expected: input.expectDigest, actual } },
    );
  }
  if (input.expectSize !== undefined && hasher.bytes !== input.expectSize) {
    throw new PodscopeError(
      'FailedPrecondition',
      `${input.label}: size ${hasher.bytes} does not match the descriptor size ${input.expectSize}`,
      { details: { field: 'size', expected: input.expectSize, actual: hasher.bytes } },
    );
  }
  return hasher.bytes;
}
