/**
 * The one way the engine starts a process. Every call has a timeout and may take an AbortSignal; failures carry the
 * command, exit code or signal, stdout/stderr and whether it timed out or was cancelled (execa-style).
 */
import type { HeldFileLock } from './file-lock';
import { spawn } from 'node:child_process';
import { PodscopeError } from '../../../shared/domain/errors';

export interface ExecRequest {
  file: string;
  args?: string[];
  /** bytes for stdin; stdin is closed after writing (or immediately when absent) */
  input?: string;
  /** full environment of the child; defaults to the engine's own */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** do not attach stdout/stderr pipes (for processes that leave daemons holding them, e.g. `runc create`) */
  ignoreOutput?: boolean;
}

export interface ExecResult {
  command: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  canceled: boolean;
}

export class ProcessError extends PodscopeError {
  readonly result: ExecResult;
  constructor(message: string, result: ExecResult, cause?: unknown) {
    const code = result.timedOut ? 'DeadlineExceeded' : result.canceled ? 'Canceled' : 'RuntimeError';
    super(code, message, {
      cause,
      details: {
        command: result.command,
        exitCode: result.exitCode,
        signal: result.signal,
        stderr: result.stderr.slice(-4000),
        timedOut: result.timedOut,
        canceled: result.canceled,
      },
    });
    this.result = result;
  }
}

/** a daemon started by launchWithSyncPipe (sync-pipe.ts) */
export interface SyncPipeRequest {
  file: string;
  args: string[];
  /** the daemon's working directory */
  cwd: string;
  /** its whole environment (the sync pipe's variable included) */
  env: NodeJS.ProcessEnv;
}

/** what the daemon said: its first JSON line, or that it closed its pipes without one, or that it could not start */
export type SyncPipeOutcome =
  | { kind: 'line'; line: string; stderr: string }
  | { kind: 'closed'; exitCode: number | null; stderr: string }
  | { kind: 'spawn-error'; code: string; message: string };

export interface ProcessRunner {
  /** Runs to completion; never throws for a non-zero exit (callers decide), only for spawn failure. */
  run(req: ExecRequest): Promise<ExecResult>;
  /**
   * Starts a daemon that answers over a sync pipe on fd 3 and waits for its first JSON line (sync-pipe.ts);
   * a runner without it has callers do that in-process.
   */
  launchWithSyncPipe?(req: SyncPipeRequest): Promise<SyncPipeOutcome>;
  /** an exclusive flock held for the caller (file-lock.ts); a runner without it has callers take it in-process */
  holdFileLock?(file: string, waitSeconds: number): Promise<HeldFileLock | undefined>;
}

function quote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export function describeCommand(file: string, args: string[] = []): string {
  return [file, ...args].map(quote).join(' ');
}

/** What is kept of a child's output: a plugin that floods its pipes must not grow the engine, its store or the UI. */
export const MAX_STDOUT_BYTES = 16 * 1024 * 1024;
export const MAX_STDERR_BYTES = 64 * 1024;
/** After a kill, how long inherited pipes may stay open (a grandchild holding them) before we stop waiting. */
const PIPE_GRACE_MS = 500;

export class NodeProcessRunner implements ProcessRunner {
  run(req: ExecRequest): Promise<ExecResult> {
    const started = performance.now();
    const command = describeCommand(req.file, req.args);
    return new Promise<ExecResult>((resolve, reject) => {
      let timedOut = false;
      let canceled = false;
      let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      let settled = false;
      const out = new BoundedCapture(MAX_STDOUT_BYTES, 'head');
      const err = new BoundedCapture(MAX_STDERR_BYTES, 'tail');
      if (req.signal?.aborted) {
        resolve({ command, exitCode: null, signal: null, stdout: '', stderr: '', durationMs: 0, timedOut: false, canceled: true });
        return;
      }
      const child = spawn(req.file, req.args ?? [], {
        env: req.env ?? process.env,
        cwd: req.cwd,
        // its own process group, so a timeout or cancel can kill what it started too (a delegated IPAM plugin,
        // an iptables run): left alive, they would finish their work after our cleanup undid it
        detached: true,
        stdio: [req.input !== undefined ? 'pipe' : 'ignore', req.ignoreOutput ? 'ignore' : 'pipe', req.ignoreOutput ? 'ignore' : 'pipe'],
      });
      const kill = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          try {
            child.kill('SIGKILL');
          } catch {
            /* already gone */
          }
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, req.timeoutMs);
      const onAbort = () => {
        canceled = true;
        kill();
      };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      const finish = () => {
        if (settled || !exited) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        resolve({
          command,
          exitCode: exited.code,
          signal: exited.signal,
          stdout: out.text(),
          stderr: err.text(),
          durationMs: performance.now() - started,
          timedOut,
          canceled,
        });
      };
      child.stdout?.on('data', (b: Buffer) => out.push(b));
      child.stderr?.on('data', (b: Buffer) => err.push(b));
      child.on('error', (e) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        const result: ExecResult = {
          command,
          exitCode: null,
          signal: null,
          stdout: '',
          stderr: '',
          durationMs: performance.now() - started,
          timedOut,
          canceled,
        };
        reject(new ProcessError(`cannot start ${req.file}: ${(e as NodeJS.ErrnoException).code ?? e.message}`, result, e));
      });
      child.on('exit', (code, signal) => {
        exited = { code, signal };
        // normally 'close' follows at once; when a killed child's descendants still hold the pipes, stop waiting
        if (timedOut || canceled) {
          setTimeout(() => {
            child.stdout?.destroy();
            child.stderr?.destroy();
            finish();
          }, PIPE_GRACE_MS).unref();
        }
      });
      child.on('close', finish);
      if (child.stdin) {
        child.stdin.on('error', () => {
          /* the child may exit without reading stdin (EPIPE) */
        });
        child.stdin.end(req.input);
      }
    });
  }
}

/** Keeps the first (stdout: a result must be whole or refused) or last (stderr: the end says why) bytes. */
class BoundedCapture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;

  constructor(
    private readonly limit: number,
    private readonly keep: 'head' | 'tail',
  ) {}

  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    if (this.keep === 'head') {
      while (this.size > this.limit && this.chunks.length > 0) {
        const last = this.chunks.pop()!;
        const room = this.limit - (this.size - last.length);
        if (room > 0) this.chunks.push(last.subarray(0, room));
        this.dropped += last.length - Math.max(room, 0);
        this.size = this.limit;
      }
    } else {
      while (this.size > this.limit && this.chunks.length > 1) {
        const first = this.chunks.shift()!;
        this.size -= first.length;
        this.dropped += first.length;
      }
      if (this.size > this.limit) {
        const only = this.chunks[0]!;
        this.chunks[0] = only.subarray(only.length - this.limit);
        this.dropped += only.length - this.limit;
        this.size = this.limit;
      }
    }
  }

  text(): string {
    const body = Buffer.concat(this.chunks).toString('utf8');
    if (this.dropped === 0) return body;
    return this.keep === 'head'
      ? `${body}\n[… ${this.dropped} more bytes not kept]`
      : `[… ${this.dropped} earlier bytes not kept]\n${body}`;
  }
}

/** Runs and throws a ProcessError unless the exit code is 0. */
export async function runChecked(runner: ProcessRunner, req: ExecRequest): Promise<ExecResult> {
  const r = await runner.run(req);
  if (r.exitCode !== 0) {
    const why = r.timedOut
      ? `timed out after ${req.timeoutMs} ms`
      : r.canceled
        ? 'was canceled'
        : r.signal
          ? `was killed by ${r.signal}`
          : `exited with code ${r.exitCode}`;
    const tail = r.stderr.trim().split('\n').slice(-3).join(' | ');
    throw new ProcessError(`${r.command} ${why}${tail ? `: ${tail}` : ''}`, r);
  }
  return r;
}
