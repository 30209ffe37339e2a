/**
 * Hashing what flows through a stream, kept apart from unpack.ts so that reading the store's documents (documents.ts)
 * does not load node-tar and fzstd, which only ingesting a layer needs.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** Counts and hashes what flows through. */
export class HashingStream extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  constructor(private readonly onBytes?: (n: number) => void) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.onBytes?.(chunk.length);
    cb(null, chunk);
  }
  digest(): string {
    return `sha256:${this.hash.digest('hex')}`;
  }
}
