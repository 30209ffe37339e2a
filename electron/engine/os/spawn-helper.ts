/**
 * A ProcessRunner whose children are started by a small helper process instead of the engine itself.
 *
 * Why: libuv starts a child with fork(), which copies the parent's page tables while the event loop waits. Measured
 * on this machine kind (2 loaded cores), one spawn() blocks the caller ~2 ms at 45 MiB RSS, ~14 ms at 150 MiB and
 * ~36 ms at 350 MiB; a daemon holding 100 pods (~115 MiB) spent 15.6 s of a 30 s create+teardown run inside spawn(),
 * ~10 ms per CNI plugin, umount or runc, and every other request waited behind each one. The helper is a bare Node
 * process (its RSS stays at Node's floor, so its forks stay cheap) that runs the same spawn the engine would and sends
 * back the exit and the output; the engine keeps timeouts and cancellation (it kills the child's process group
 * itself, the pid arriving right after the spawn). If the helper cannot start, or has died, calls spawn in-process;
 * the commands it had in hand when it died fail as a spawn failure would (ProcessError), since they may have run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  describeCommand,
  MAX_STDERR_BYTES,
  MAX_STDOUT_BYTES,
  NodeProcessRunner,
  ProcessError,
  type ExecRequest,
  type ExecResult,
  type ProcessRunner,
} from './exec';
import { PodscopeError } from '../../../shared/domain/errors';
import { holdFileLockInProcess, type HeldFileLock } from './file-lock';
import { nodeScriptEnv } from './node-script-env';
import { launchWithSyncPipeInProcess, type SyncPipeOutcome, type SyncPipeRequest } from './sync-pipe';

/**
 * Above this RSS a command waits for a starting helper instead of being forked from this process: the fork's cost
 * grows with the RSS (~2 ms at 45 MiB, ~14 ms at 150 MiB, ~36 ms at 350 MiB, see above), and a test worker with the
 * engine loaded spent ~40 ms of CPU on each of an engine start's in-process forks; the helper is up in tens of ms.
 */
export const FORK_COSTLY_RSS = 100 * 1024 * 1024;
/** how long a command waits for a starting helper before it is forked in-process after all */
const HELPER_START_WAIT_MS = 3000;

/** after a kill, how long a grandchild holding the pipes is waited for (as NodeProcessRunner does) */
const PIPE_GRACE_MS = 500;

/** The helper's source: spawn as asked, keep bounded output, answer with the pid and then the exit. */
const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
// the engine may be gone (its channel closed) while a child still runs: drop the answer, never crash on it
const send = (m) => { if (process.connected) process.send(m, () => {}); };
const firstJsonLine = (text) => text.split('\\n').find((l) => { if (!l.trim().startsWith('{')) return false; try { JSON.parse(l); return true; } catch { return false; } });
// a daemon answering on a sync pipe (fd 3, sync-pipe.ts): its first JSON line, or its exit if it closes without one
const launchWithSyncPipe = (m) => {
  let child;
  try {
    child = spawn(m.file, m.args, { env: m.env, cwd: m.cwd, detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  } catch (e) { send({ id: m.id, sync: { kind: 'spawn-error', code: e.code || '', message: e.message } }); return; }
  let text = '', stderr = '', settled = false;
  const settle = (o) => { if (settled) return; settled = true; child.unref(); child.stdio[3].destroy(); child.stderr.destroy(); send({ id: m.id, sync: o }); };
  child.stderr.on('data', (b) => { if (stderr.length < ${MAX_STDERR_BYTES}) stderr += b.toString(); });
  child.stdio[3].on('data', (b) => { text += b.toString(); const line = firstJsonLine(text); if (line !== undefined) settle({ kind: 'line', line, stderr }); });
  child.on('error', (e) => settle({ kind: 'spawn-error', code: e.code || '', message: e.message }));
  child.on('close', (code) => settle({ kind: 'closed', exitCode: code, stderr }));
};
// flock(2) held for the engine on a descriptor of this process (holdFileLock): flock(1) locks the same open file
// description as our fd 3 and exits; the lock lasts until the engine says unlock, or this process ends
const heldLocks = new Map();
const holdFileLock = (m) => {
  let fd;
  try { fd = require('node:fs').openSync(m.file, 'a+', 0o600); } catch (e) { send({ id: m.id, lock: { error: e.message } }); return; }
  let err = '';
  const child = spawn('flock', ['--timeout', String(m.waitSeconds), '--conflict-exit-code', '75', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
  child.stderr.on('data', (b) => { err += b.toString(); });
  const fail = (error) => { require('node:fs').closeSync(fd); send({ id: m.id, lock: { error } }); };
  child.on('error', (e) => fail('cannot run flock(1) from util-linux: ' + e.message));
  child.on('close', (code) => {
    if (code === 0) { heldLocks.set(m.id, fd); send({ id: m.id, lock: { held: true } }); }
    else if (code === 75) { require('node:fs').closeSync(fd); send({ id: m.id, lock: { held: false } }); }
    else fail('flock(1) failed (exit ' + code + '): ' + err.trim());
  });
};
process.on('message', (m) => {
  if (m.syncPipe) { launchWithSyncPipe(m); return; }
  if (m.lock) { holdFileLock(m); return; }
  if (m.unlock !== undefined) { const fd = heldLocks.get(m.unlock); heldLocks.delete(m.unlock); if (fd !== undefined) require('node:fs').closeSync(fd); return; }
  let child;
  try {
    child = spawn(m.file, m.args, { env: m.env, cwd: m.cwd, detached: true,
      stdio: [m.input !== undefined ? 'pipe' : 'ignore', m.ignoreOutput ? 'ignore' : 'pipe', m.ignoreOutput ? 'ignore' : 'pipe'] });
  } catch (e) { send({ id: m.id, error: e.code || e.message }); return; }
  const out = [], err = [];
  let outSize = 0, errSize = 0, outDropped = 0, errDropped = 0, exit, sent = false;
  child.stdout && child.stdout.on('data', (b) => { if (outSize + b.length <= ${MAX_STDOUT_BYTES}) { out.push(b); outSize += b.length; } else outDropped += b.length; });
  child.stderr && child.stderr.on('data', (b) => { err.push(b); errSize += b.length; while (errSize > ${MAX_STDERR_BYTES} && err.length > 1) { const f = err.shift(); errSize -= f.length; errDropped += f.length; } });
  const done = () => {
    if (sent || !exit) return;
    sent = true;
    send({ id: m.id, code: exit[0], signal: exit[1], stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), outDropped, errDropped });
  };
  child.on('error', (e) => { if (!sent) { sent = true; send({ id: m.id, error: e.code || e.message }); } });
  child.on('spawn', () => send({ id: m.id, pid: child.pid }));
  child.on('exit', (code, signal) => { exit = [code, signal]; if (signal) setTimeout(() => { child.stdout && child.stdout.destroy(); child.stderr && child.stderr.destroy(); done(); }, ${PIPE_GRACE_MS}).unref(); });
  child.on('close', done);
  if (child.stdin) { child.stdin.on('error', () => {}); child.stdin.end(m.input); }
});
process.on('disconnect', () => process.exit(0));
send({ ready: true });
`;

interface Pending {
  req: ExecRequest;
  started: number;
  pid?: number;
  timedOut: boolean;
  canceled: boolean;
  resolve(r: ExecResult): void;
  reject(e: unknown): void;
  cleanup(): void;
}

interface HelperReply {
  ready?: boolean;
  /** the answer to a launchWithSyncPipe */
  sync?: SyncPipeOutcome;
  /** the answer to a holdFileLock: taken, the wait ran out, or why it could not be tried */
  lock?: { held?: boolean; error?: string };
  id: number;
  pid?: number;
  error?: string;
  code?: number | null;
  signal?: NodeJS.Signals | null;
  stdout?: string;
  stderr?: string;
  outDropped?: number;
  errDropped?: number;
}

/** SIGKILL to a process group the helper started; one that is already gone is no error */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

export class SpawnHelperRunner implements ProcessRunner {
  private helper: ChildProcess | undefined;
  private broken = false;
  /** until the helper says it is up, commands spawn in-process (no command waits for Node's start-up) */
  private isReady = false;
  private readonly readyWaiters: (() => void)[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** requests answered by one message (a sync-pipe launch, a lock): what to do with it, or when the helper is lost */
  private readonly oneAnswer = new Map<number, { answer(m: HelperReply): void; lost(): void }>();
  private readonly direct: ProcessRunner;

  private readonly forkIsCostly: () => boolean;

  /**
   * @param opts.forkIsCostly whether a fork of this process now costs more than waiting for the helper to come up
   *   (default: its RSS is above FORK_COSTLY_RSS)
   */
  constructor(fallback: ProcessRunner = new NodeProcessRunner(), opts: { forkIsCostly?: () => boolean } = {}) {
    this.direct = fallback;
    this.forkIsCostly = opts.forkIsCostly ?? (() => process.memoryUsage.rss() > FORK_COSTLY_RSS);
  }

  run(req: ExecRequest): Promise<ExecResult> {
    const helper = this.broken ? undefined : this.start();
    // While the helper starts, a small process (the CLI) forks its commands itself rather than wait; a large one (the
    // app, a daemon with pods, a test worker) waits for the helper: its start-up commands (the handlers' --version)
    // would each block its event loop for longer than the helper takes to come up
    if (helper && !this.isReady && !req.signal?.aborted && this.forkIsCostly())
      return this.readyWithin(HELPER_START_WAIT_MS).then(() => (this.isReady ? this.run(req) : this.direct.run(req)));
    if (!helper || !this.isReady || req.signal?.aborted) return this.direct.run(req);
    const id = this.nextId++;
    return new Promise<ExecResult>((resolve, reject) => {
      const p: Pending = {
        req,
        started: performance.now(),
        timedOut: false,
        canceled: false,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          req.signal?.removeEventListener('abort', onAbort);
          this.pending.delete(id);
          if (this.inFlight() === 0) this.idle();
        },
      };
      const kill = () => {
        if (p.pid !== undefined) killGroup(p.pid);
      };
      const timer = setTimeout(() => {
        p.timedOut = true;
        kill();
      }, req.timeoutMs);
      const onAbort = () => {
        p.canceled = true;
        kill();
      };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, p);
      this.busy();
      helper.send({
        id,
        file: req.file,
        args: req.args ?? [],
        env: req.env ?? process.env,
        cwd: req.cwd,
        input: req.input,
        ignoreOutput: req.ignoreOutput ?? false,
      });
    });
  }

  /** conmon and the like, started from the helper: the same outcome as launchWithSyncPipeInProcess */
  launchWithSyncPipe(req: SyncPipeRequest): Promise<SyncPipeOutcome> {
    const helper = this.broken ? undefined : this.start();
    if (!helper || !this.isReady) return launchWithSyncPipeInProcess(req);
    return new Promise<SyncPipeOutcome>((resolve) => {
      this.ask(
        helper,
        { syncPipe: true, file: req.file, args: req.args, env: req.env, cwd: req.cwd },
        {
          answer: (m) => m.sync && resolve(m.sync),
          // it may have started: the caller's failure path cleans up what it left
          lost: () => resolve({ kind: 'closed', exitCode: null, stderr: 'lost the answer: the spawn helper exited' }),
        },
      );
    });
  }

  /**
   * An exclusive flock(2) on `file`, held by the helper for the engine (its flock(1) forks from the small helper,
   * not from the engine): undefined when another holder kept it for `waitSeconds`; otherwise release() lets go.
   * The lock ends with the helper, which ends with the engine. Without a helper: in-process, as state-lock.ts does.
   */
  async holdFileLock(file: string, waitSeconds: number): Promise<HeldFileLock | undefined> {
    const helper = this.broken ? undefined : this.start();
    if (!helper || !this.isReady) return holdFileLockInProcess(file, waitSeconds);
    let id = 0;
    const answer = await new Promise<{ held?: boolean; error?: string }>((resolve) => {
      id = this.ask(
        helper,
        { lock: true, file, waitSeconds },
        {
          answer: (m) => m.lock && resolve(m.lock),
          lost: () => resolve({ error: 'lost the answer: the spawn helper exited' }),
        },
      );
    });
    if (answer.error !== undefined) throw new PodscopeError('Internal', `cannot lock ${file}: ${answer.error}`);
    if (!answer.held) return undefined;
    return {
      release: () => {
        if (this.helper === helper && helper.connected) helper.send({ unlock: id });
      },
    };
  }

  /** Starts the helper if needed; resolves once commands go through it (or it could not start). */
  ready(): Promise<void> {
    if (this.isReady || this.broken || !this.start()) return Promise.resolve();
    this.busy();
    return new Promise<void>((r) => this.readyWaiters.push(r)).finally(() => {
      if (this.inFlight() === 0) this.idle();
    });
  }

  /** false once its helper has died, failed to start or been closed: every command then forks in-process */
  get usable(): boolean {
    return !this.broken;
  }

  /** ready(), or after `ms` whatever the helper's state (a helper that never answers must not hold commands up) */
  private readyWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => {
      timer = setTimeout(r, ms);
      timer.unref();
    });
    return Promise.race([this.ready(), late]).finally(() => clearTimeout(timer));
  }

  /** Ends the helper (the children it started run on, as the engine's own would). */
  close(): void {
    this.broken = true;
    this.helper?.disconnect();
    this.helper = undefined;
  }

  private start(): ChildProcess | undefined {
    if (this.helper) return this.helper;
    try {
      const helper = spawn(process.execPath, ['-e', HELPER_SOURCE], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: nodeScriptEnv(),
      });
      helper.on('message', (m: HelperReply) => this.onReply(m));
      const lost = () => {
        if (this.helper !== helper) return;
        this.helper = undefined;
        this.broken = true;
        for (const w of this.readyWaiters.splice(0)) w();
        for (const [, p] of [...this.pending]) {
          p.cleanup();
          const result: ExecResult = {
            command: describeCommand(p.req.file, p.req.args),
            exitCode: null,
            signal: null,
            stdout: '',
            stderr: '',
            durationMs: performance.now() - p.started,
            timedOut: p.timedOut,
            canceled: p.canceled,
          };
          p.reject(new ProcessError(`lost the answer for ${p.req.file}: the spawn helper exited`, result));
        }
        const waiting = [...this.oneAnswer.values()];
        this.oneAnswer.clear();
        for (const w of waiting) w.lost();
      };
      helper.on('exit', lost);
      helper.on('error', lost);
      this.helper = helper;
      this.idle();
      return helper;
    } catch {
      this.broken = true;
      return undefined;
    }
  }

  private onReply(m: HelperReply): void {
    if (m.ready) {
      this.isReady = true;
      for (const w of this.readyWaiters.splice(0)) w();
      return;
    }
    const waiting = this.oneAnswer.get(m.id);
    if (waiting) {
      this.oneAnswer.delete(m.id);
      if (this.inFlight() === 0) this.idle();
      waiting.answer(m);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.pid !== undefined && m.code === undefined && m.error === undefined) {
      p.pid = m.pid;
      // timed out or canceled before its pid was known: end its group now. It may have exited meanwhile (ESRCH),
      // and a throw here would be an uncaught exception in the engine (seen once in CI).
      if (p.timedOut || p.canceled) killGroup(m.pid);
      return;
    }
    p.cleanup();
    const base = {
      command: describeCommand(p.req.file, p.req.args),
      durationMs: performance.now() - p.started,
      timedOut: p.timedOut,
      canceled: p.canceled,
    };
    if (m.error !== undefined) {
      // the same failure the in-process spawn reports (ENOENT, EACCES)
      this.direct.run({ ...p.req, signal: undefined }).then(p.resolve, p.reject);
      return;
    }
    const stdout = m.outDropped ? `${m.stdout ?? ''}\n[… ${m.outDropped} more bytes not kept]` : (m.stdout ?? '');
    const stderr = m.errDropped ? `[… ${m.errDropped} earlier bytes not kept]\n${m.stderr ?? ''}` : (m.stderr ?? '');
    p.resolve({ ...base, exitCode: m.code ?? null, signal: m.signal ?? null, stdout, stderr });
  }

  /** sends a request answered by one message; returns its id */
  private ask(helper: ChildProcess, request: object, waiting: { answer(m: HelperReply): void; lost(): void }): number {
    const id = this.nextId++;
    this.oneAnswer.set(id, waiting);
    this.busy();
    helper.send({ id, ...request });
    return id;
  }

  private inFlight(): number {
    return this.pending.size + this.oneAnswer.size;
  }

  /** the helper keeps the engine's process alive only while a command is out */
  private busy(): void {
    this.helper?.ref();
    (this.helper?.channel as { ref?(): void } | undefined)?.ref?.();
  }

  private idle(): void {
    this.helper?.unref();
    (this.helper?.channel as { unref?(): void } | undefined)?.unref?.();
  }
}
