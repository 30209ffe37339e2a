/**
 * Reads a container's CRI log file (what conmon writes; shared/domain/cri-log.ts parses it) the way kubelet's
 * log reader does (pkg/kubelet/kuberuntime/logs/logs.go): P records joined into lines, a stream filter, `sinceTime`,
 * `tail` (the last N lines), and `follow`, which keeps reading until the container has exited and the file is drained.
 *
 * Rotation (docs/semantics.md#container-logs): kubelet renames `<n>.log` away and calls ReopenContainerLog, after
 * which conmon writes a new file at log_path. A follower notices that log_path is another inode than the file it
 * has open, drains the old one to its end, then continues with the new file from its start, so no line is lost or
 * read twice. A file truncated in place (copytruncate) is read again from its start.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import { CriLogJoiner, matchesLogFilter, parseCriLog, rfc3339ToNs, type LogEntry, type LogFilter } from '../../../shared/domain/cri-log';
import { PodscopeError } from '../../../shared/domain/errors';

export interface ContainerLogOptions extends LogFilter {
  follow?: boolean;
  /** only the last N lines (of those the filter keeps); undefined = all */
  tail?: number;
  signal?: AbortSignal;
  /** how often a follower looks for new data (default 100 ms) */
  pollMs?: number;
}

const CHUNK = 256 * 1024;

class LogFile {
  offset = 0;
  rest = '';
  private constructor(
    readonly fh: FileHandle,
    readonly ino: number,
  ) {}

  static async open(path: string): Promise<LogFile | undefined> {
    const fh = await open(path, 'r').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (!fh) return undefined;
    return new LogFile(fh, (await fh.stat()).ino);
  }

  /** the text appended since the last read (complete lines only; an unfinished last line waits in `rest`) */
  async readNew(): Promise<string> {
    const { size } = await this.fh.stat();
    if (size < this.offset) {
      // truncated in place: what is there now is new
      this.offset = 0;
      this.rest = '';
    }
    let text = '';
    while (this.offset < size) {
      const buf = Buffer.alloc(Math.min(CHUNK, size - this.offset));
      const { bytesRead } = await this.fh.read(buf, 0, buf.length, this.offset);
      if (bytesRead === 0) break;
      this.offset += bytesRead;
      text += buf.subarray(0, bytesRead).toString('utf8');
    }
    if (!text) return '';
    const all = this.rest + text;
    const nl = all.lastIndexOf('\n');
    this.rest = all.slice(nl + 1);
    return all.slice(0, nl + 1);
  }

  /**
   * The last `tail` lines the filter keeps, read from the end in growing windows (a log the runtime never rotates can
   * be large; kubelet's tail reads backwards too). A window starts at a line boundary; each stream's first line in it
   * may be the cut-off end of a longer P…F line, so it only counts when the window reaches the file's start. The
   * file is then positioned at its end, and the returned joiner holds a P record still waiting for its F.
   */
  async readTail(
    tail: number,
    keep: (e: LogEntry[]) => LogEntry[],
    sinceNs: bigint | undefined,
  ): Promise<{ entries: LogEntry[]; joiner: CriLogJoiner }> {
    const { size } = await this.fh.stat();
    for (let span = 64 * 1024; ; span *= 4) {
      const start = Math.max(0, size - span);
      const buf = Buffer.alloc(size - start);
      const { bytesRead } = await this.fh.read(buf, 0, buf.length, start);
      let text = buf.subarray(0, bytesRead).toString('utf8');
      if (start > 0) {
        const nl = text.indexOf('\n');
        if (nl < 0) continue;
        text = text.slice(nl + 1);
      }
      const joiner = new CriLogJoiner();
      const { entries, rest } = parseCriLog(text, joiner);
      const seen = new Set<string>();
      const whole =
        start === 0
          ? entries
          : entries.filter((e) => {
              if (seen.has(e.stream)) return true;
              seen.add(e.stream);
              return false;
            });
      const matching = keep(whole);
      // with since, a window whose oldest record is before it holds every line that can match
      const oldest = entries.reduce<bigint | undefined>((m, e) => {
        const t = rfc3339ToNs(e.time);
        return t !== undefined && (m === undefined || t < m) ? t : m;
      }, undefined);
      const sinceCovered = sinceNs !== undefined && oldest !== undefined && oldest < sinceNs;
      if (start === 0 || matching.length >= tail || sinceCovered) {
        this.offset = start + bytesRead;
        this.rest = rest;
        // rest was counted in bytesRead; readNew re-reads nothing and prepends it to what comes next
        return { entries: tail === 0 ? [] : matching.slice(-tail), joiner };
      }
    }
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

/**
 * Opens the log (a missing file is NotFound now, not at the first line) and returns its lines, in order. With
 * follow, `isRunning` is asked between reads; the reader ends once it answered false and a read after that found
 * nothing new. Iterate it to the end or break out of the loop: either closes the file.
 */
export async function openContainerLog(
  path: string,
  opts: ContainerLogOptions,
  isRunning: () => Promise<boolean>,
): Promise<AsyncGenerator<LogEntry>> {
  return flatten(await openContainerLogReads(path, opts, isRunning));
}

/**
 * The same lines, one array per read of the file (never empty): for a sender that ships what one read found
 * together (the app's log viewer) instead of line by line.
 */
export async function openContainerLogReads(
  path: string,
  opts: ContainerLogOptions,
  isRunning: () => Promise<boolean>,
): Promise<AsyncGenerator<LogEntry[]>> {
  if (opts.tail !== undefined && (!Number.isInteger(opts.tail) || opts.tail < 0))
    throw new PodscopeError('InvalidArgument', 'tail must be a non-negative integer');
  const file = await LogFile.open(path);
  if (!file) throw new PodscopeError('NotFound', `cannot open ${path}: ENOENT`);
  return readLog(file, path, opts, isRunning);
}

async function* flatten(reads: AsyncGenerator<LogEntry[]>): AsyncGenerator<LogEntry> {
  try {
    for await (const entries of reads) yield* entries;
  } finally {
    await reads.return(undefined);
  }
}

async function* readLog(
  opened: LogFile,
  path: string,
  opts: ContainerLogOptions,
  isRunning: () => Promise<boolean>,
): AsyncGenerator<LogEntry[]> {
  let file = opened;
  let joiner = new CriLogJoiner();
  const keep = (entries: LogEntry[]) => entries.filter((e) => matchesLogFilter(e, opts));
  // one read's lines at a time; a read the filter empties yields nothing
  async function* kept(entries: LogEntry[]) {
    const k = keep(entries);
    if (k.length > 0) yield k;
  }
  try {
    if (opts.tail !== undefined) {
      const t = await file.readTail(opts.tail, keep, opts.sinceNs);
      joiner = t.joiner;
      if (t.entries.length > 0) yield t.entries;
    } else {
      yield* kept(parseCriLog(await file.readNew(), joiner).entries);
    }
    if (!opts.follow) return;

    const pollMs = opts.pollMs ?? 100;
    while (!opts.signal?.aborted) {
      const running = await isRunning().catch(() => false);
      let got = false;
      for (;;) {
        const text = await file.readNew();
        if (text) {
          got = true;
          yield* kept(parseCriLog(text, joiner).entries);
          continue;
        }
        // drained; has log_path become another file (rotated, then reopened by the shim)?
        const now = await stat(path).catch(() => undefined);
        if (!now || now.ino === file.ino) break;
        const next = await LogFile.open(path);
        if (!next) break;
        await file.close();
        file = next;
        got = true;
      }
      if (!running && !got) break;
      if (!got) await sleep(pollMs, opts.signal);
    }
    // the writer is gone: a P record without its F is still a line
    if (!opts.signal?.aborted) yield* kept(joiner.flush());
  } finally {
    await file.close();
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
