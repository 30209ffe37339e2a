/**
 * Reading the JSON documents an image is made of (index, manifest, config, docker-save manifest.json) and the
 * digests that name them: every parse failure is an InvalidArgument naming the document, every digest mismatch a
 * FailedPrecondition naming what was expected.
 */
import type { Readable } from 'node:stream';
import type { ZodError } from 'zod';
import { PodscopeError } from '../../../shared/domain/errors';
import {
  describeZodError,
  INDEX_MEDIA_TYPES,
  manifestMediaTypeProblem,
  ManifestSchema,
  type Descriptor,
  type ImageManifest,
} from '../../../shared/domain/image-spec';
import { HashingStream } from './hashing';

export { hexOf } from './digests';

export const sha256 = (b: Buffer) => {
  const h = new HashingStream();
  h.hash.update(b);
  return `sha256:${h.hash.digest('hex')}`;
};

export function parseDoc<T>(
  what: string,
  bytes: Buffer,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: ZodError } },
): T {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new PodscopeError('InvalidArgument', `${what}: not valid JSON (${(e as Error).message})`, { details: { field: what } });
  }
  const r = schema.safeParse(json);
  if (!r.success) throw new PodscopeError('InvalidArgument', describeZodError(what, r.error), { details: { field: what } });
  return r.data;
}

export function isIndex(mediaType: string, bytes: Buffer): boolean {
  if (INDEX_MEDIA_TYPES.includes(mediaType)) return true;
  if (mediaType && mediaType !== 'application/json' && mediaType !== 'application/octet-stream' && mediaType !== 'text/plain') return false;
  try {
    const j = JSON.parse(bytes.toString('utf8')) as { mediaType?: string; manifests?: unknown };
    return j.mediaType ? INDEX_MEDIA_TYPES.includes(j.mediaType) : Array.isArray(j.manifests);
  } catch {
    return false;
  }
}

export function parseManifest(bytes: Buffer): ImageManifest {
  const m = parseDoc('manifest', bytes, ManifestSchema);
  const problem = manifestMediaTypeProblem(m);
  if (problem) throw new PodscopeError('InvalidArgument', problem, { details: { field: problem.split(':')[0] } });
  return m;
}

/** Reads a small blob (config) into memory, with its size and digest checked. */
export async function readSmallBlob(blob: { stream: Readable }, desc: Descriptor, what: string): Promise<Buffer> {
  if (desc.size > 8 * 1024 * 1024)
    throw new PodscopeError('FailedPrecondition', `${what}.size ${desc.size} is over the 8 MiB config limit`, {
      details: { field: `${what}.size` },
    });
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of blob.stream) {
    n += (c as Buffer).length;
    if (n > desc.size) break;
    chunks.push(c as Buffer);
  }
  blob.stream.destroy();
  const bytes = Buffer.concat(chunks);
  const d = sha256(bytes);
  if (d !== desc.digest)
    throw new PodscopeError('FailedPrecondition', `${what}: content digest ${d} does not match ${desc.digest}; nothing was stored`, {
      details: { field: `${what}.digest`, expected: desc.digest, actual: d },
    });
  return bytes;
}
