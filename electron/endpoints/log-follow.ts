/**
 * Reads and follows a CRI container log file (`<RFC3339Nano> <stdout|stderr> <F|P> <text>` per record, the format
 * of kubelet's pkg/kubelet/kuberuntime/logs and of Podscope's log shim). It works for any runtime on this host:
 * crictl logs reads the file ContainerStatus names the same way, for containerd as for Podscope.
 * Follow polls the file (inotify is not reliable across the rename-and-reopen rotation, and a poll is cheap for
 * one open viewer); a rotation (the path now names another inode, or the file shrank) is handled by draining the
 * old file to its end and going on from the start of the new one, as kubelet's follow does.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { LogLine } from '../../shared/domain/streams';
import { LOG_BATCH_LINES } from '../../shared/domain/streams';

export interface LogFollowOptions {
  path: string;
  /** lines of history to send first (0: none) */
  tail: number;
  follow: boolean;
  signal: AbortSignal;
  /** resolves when the receiver can take more (flow control) */
  onLines(lines: LogLine[]): Promise<void>;
  pollMs?: number;
}

/** the most history read to find the last `tail` lines (a huge log is not read whole) */
const MAX_HISTORY_BYTES = 8 * 1024 * 1024;
const READ_CHUNK = 256 * 1024;
const RECORD = /^(\S+) (stdout|stderr) (F|P) ?(.*)$/;

/** Turns raw records into lines, joining P(artial) records of a stream with the F record that ends them. */
export class CriLogParser {
  private rest = '';
  private partial: Record<'stdout' | 'stderr', string> = { stdout: '', stderr: '' };
  push(text: string): LogLine[] {
    const data = this.rest + text;
    const parts = data.split('\n');
    this.rest = parts.pop() ?? '';
    const out: LogLine[] = [];
    for (const raw of parts) {
      if (!raw) continue;
      const m = RECORD.exec(raw);
      if (!m) {
        out.push({ time: '', stream: 'stdout', text: raw });
        continue;
      }
      const stream = m[2] as 'stdout' | 'stderr';
      if (m[3] === 'P') {
        this.partial[stream] += m[4] ?? '';
        continue;
      }
      out.push({ time: m[1]!, stream, text: this.partial[stream] + (m[4] ?? '') });
      this.partial[stream] = '';
    }
    return out;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

async function emitBatched(lines: LogLine[], onLines: LogFollowOptions['onLines'], signal: AbortSignal) {
  for (let i = 0; i < lines.length && !signal.aborted; i += LOG_BATCH_LINES) await onLines(lines.slice(i, i + LOG_BATCH_LINES));
}

async function readRange(fh: FileHandle, from: number, to: number): Promise<string> {
  const chunks: Buffer[] = [];
  let pos = from;
  while (pos < to) {
    const buf = Buffer.alloc(Math.min(READ_CHUNK, to - pos));
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    chunks.push(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function followCriLog(opts: LogFollowOptions): Promise<void> {
  const { signal } = opts;
  const pollMs = opts.pollMs ?? 200;
  let fh: FileHandle | undefined;
  let ino = -1;
  let offset = 0;
  let parser = new CriLogParser();
  try {
    try {
      fh = await open(opts.path, 'r');
    } catch (e) {
      // a container that has not written yet may have no file; with follow, wait for it
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !opts.follow) throw e;
    }
    if (fh) {
      const st = await fh.stat();
      ino = st.ino;
      const start = Math.max(0, st.size - MAX_HISTORY_BYTES);
      let text = await readRange(fh, start, st.size);
      offset = st.size;
      // a cut in the middle of a record: drop up to the first full one
      if (start > 0) text = text.slice(text.indexOf('\n') + 1);
      const lines = parser.push(text);
      if (opts.tail > 0) await emitBatched(lines.slice(-opts.tail), opts.onLines, signal);
    }
    while (opts.follow && !signal.aborted) {
      await sleep(pollMs, signal);
      if (signal.aborted) break;
      if (fh) {
        // whatever the old file still holds comes first
        const own = await fh.stat();
        if (own.size > offset) {
          const text = await readRange(fh, offset, own.size);
          offset = own.size;
          await emitBatched(parser.push(text), opts.onLines, signal);
        }
      }
      // the path is looked at only after the open file was read to its end: a size below what was read is a truncation
      const st = await stat(opts.path).catch(() => undefined);
      if (!st) continue;
      if (!fh || st.ino !== ino || st.size < offset) {
        await fh?.close();
        fh = await open(opts.path, 'r').catch(() => undefined);
        if (!fh) continue;
        ino = (await fh.stat()).ino;
        offset = 0;
        parser = new CriLogParser();
        const size = (await fh.stat()).size;
        const text = await readRange(fh, 0, size);
        offset = size;
        await emitBatched(parser.push(text), opts.onLines, signal);
      }
    }
  } finally {
    await fh?.close();
  }
}
