/**
 * The one way the engine starts a process. Every call has a timeout and may take an AbortSignal; failures carry the
 * command, exit code or signal, stdout/stderr and whether it timed out or was cancelled (execa-style).
 */
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
      details: { command: result.command, exitCode: result.exitCode, signal: result.signal, stderr: result.stderr.slice(-4000), timedOut: result.timedOut, canceled: result.canceled },
    });
    this.result = result;
  }
}

export interface ProcessRunner {
  /** Runs to completion; never throws for a non-zero exit (callers decide), only for spawn failure. */
  run(req: ExecRequest): Promise<ExecResult>;
}

function quote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export function describeCommand(file: string, args: string[] = []): string {
  return [file, ...args].map(quote).join(' ');
}

export class NodeProcessRunner implements ProcessRunner {
  run(req: ExecRequest): Promise<ExecResult> {
    const started = performance.now();
    const command = describeCommand(req.file, req.args);
    return new Promise<ExecResult>((resolve, reject) => {
      let timedOut = false;
      let canceled = false;
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      if (req.signal?.aborted) {
        resolve({ command, exitCode: null, signal: null, stdout: '', stderr: '', durationMs: 0, timedOut: false, canceled: true });
        return;
      }
      const child = spawn(req.file, req.args ?? [], {
        env: req.env ?? process.env,
        cwd: req.cwd,
        stdio: [req.input !== undefined ? 'pipe' : 'ignore', req.ignoreOutput ? 'ignore' : 'pipe', req.ignoreOutput ? 'ignore' : 'pipe'],
      });
      const kill = () => {
        try { child.kill('SIGKILL'); } catch { /* already gone */ }
      };
      const timer = setTimeout(() => { timedOut = true; kill(); }, req.timeoutMs);
      const onAbort = () => { canceled = true; kill(); };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout?.on('data', (b: Buffer) => out.push(b));
      child.stderr?.on('data', (b: Buffer) => err.push(b));
      child.on('error', (e) => {
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        const result: ExecResult = { command, exitCode: null, signal: null, stdout: '', stderr: '', durationMs: performance.now() - started, timedOut, canceled };
        reject(new ProcessError(`cannot start ${req.file}: ${(e as NodeJS.ErrnoException).code ?? e.message}`, result, e));
      });
      child.on('close', (exitCode, signal) => {
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        resolve({
          command,
          exitCode,
          signal,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          durationMs: performance.now() - started,
          timedOut,
          canceled,
        });
      });
      if (child.stdin) {
        child.stdin.on('error', () => { /* the child may exit without reading stdin (EPIPE) */ });
        child.stdin.end(req.input);
      }
    });
  }
}

/** Runs and throws a ProcessError unless the exit code is 0. */
export async function runChecked(runner: ProcessRunner, req: ExecRequest): Promise<ExecResult> {
  const r = await runner.run(req);
  if (r.exitCode !== 0) {
    const why = r.timedOut ? `timed out after ${req.timeoutMs} ms` : r.canceled ? 'was canceled' : r.signal ? `was killed by ${r.signal}` : `exited with code ${r.exitCode}`;
    const tail = r.stderr.trim().split('\n').slice(-3).join(' | ');
    throw new ProcessError(`${r.command} ${why}${tail ? `: ${tail}` : ''}`, r);
  }
  return r;
}
