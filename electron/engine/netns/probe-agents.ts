/**
 * The two ways a probe agent (probe-agent-script.ts) runs, behind one request/answer connection:
 *   - ThreadAgent: a worker thread of this process that enters the netns with setns(2) through koffi (a Node start
 *     here is ~0.15–0.2 CPU s and adds that much to a probe's wait; a worker is about a third of it). Its id is the
 *     kernel's thread id: /proc/<tid> and /proc/<pid>/task/<tid> show it, and its netns, while it lives; a thread is
 *     not listed in /proc itself, so whatever looks for agents by process must also look at the tasks.
 *   - ChildAgent: `node -e` (through `nsenter --net=<path>` for another netns), where koffi cannot be loaded or setns
 *     is refused. It runs in a process group of its own, so close() can kill what it started with it.
 * A worker thread holds its netns as an agent process does: it is ended (and joined: 'exit' comes after the thread is
 * gone) when its probe ends, and only the one in this process's own netns is ever kept (linux-probe-net.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PodscopeError } from '../../../shared/domain/errors';
import { AGENT_SCRIPT, type AgentEnterStage } from './probe-agent-script';
import type { ConnectOutcome, DnsOutcome, PingOutcome, ProbeAgent } from './probe-net';

const START_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;
const EXIT_GRACE_MS = 1000;
const EPERM = 1;

/** koffi's native file for this platform as the build copies it beside a bundle (scripts/build-cli.mjs) */
export const KOFFI_BESIDE_BUNDLE = `koffi-${process.platform}_${process.arch}.node`;

/**
 * koffi's native file: beside the bundle this module was built into (the CLI's and the Electron main's; the Electron
 * app's from its unpacked copy, since a thread loads it by its real path), else the koffi package's own. The worker
 * loads it alone: its `load` and `func` are all setns needs, without koffi's JavaScript around them.
 */
export function koffiNativeFile(): string | undefined {
  const candidates: string[] = [];
  try {
    candidates.push(fileURLToPath(new URL(`./${KOFFI_BESIDE_BUNDLE}`, import.meta.url)));
  } catch {
    // no file URL (not expected): the package's copy
  }
  try {
    const pkg = createRequire(import.meta.url).resolve('koffi/package.json');
    candidates.push(join(dirname(pkg), 'build', 'koffi', `${process.platform}_${process.arch}`, 'koffi.node'));
  } catch {
    // not installed here (a production install without node_modules has the bundle's copy)
  }
  for (const file of candidates) {
    const unpacked = file.replace(/\.asar([\\/])/, '.asar.unpacked$1');
    if (unpacked !== file && existsSync(unpacked)) return unpacked;
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** A thread could not enter its netns for a reason process agents do not share: koffi did not load, setns failed. */
export class ThreadEnterRefused extends Error {
  constructor(
    readonly stage: Exclude<AgentEnterStage, 'open'>,
    readonly reason: string,
    /** the same refusal would meet every other thread of this process (koffi cannot load, EPERM) */
    readonly always: boolean,
  ) {
    super(reason);
  }
}

type Reply = Record<string, unknown>;

/** One agent's requests and answers, whatever carries them. */
export abstract class AgentConnection implements ProbeAgent {
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private exited = false;
  /** the last thing it said on the way out (stderr, an uncaught error), for the answers it can no longer give */
  protected lastWords = '';
  private readonly exitPromise: Promise<void>;
  private exitResolve!: () => void;
  protected id: number | undefined;

  constructor(protected readonly where: string) {
    this.exitPromise = new Promise((resolve) => {
      this.exitResolve = resolve;
    });
  }

  /** the kernel's id of the agent: its process's pid, or its thread's tid (in the same number space) */
  get pid(): number | undefined {
    return this.id;
  }

  get alive(): boolean {
    return !this.exited;
  }

  abstract readonly kind: 'thread' | 'process';
  protected abstract send(body: Reply): void;
  /** asks the agent to end (its input ends) */
  protected abstract end(): void;
  /** ends it without asking, after EXIT_GRACE_MS */
  protected abstract kill(): void;
  /** a kept agent does not hold this process's event loop; one in use does */
  abstract idle(): void;
  abstract inUse(): void;

  protected answer(msg: Reply): void {
    const done = this.pending.get(msg.id as number);
    this.pending.delete(msg.id as number);
    done?.(msg);
  }

  protected gone(): void {
    if (this.exited) return;
    this.exited = true;
    const words = this.lastWords.trim().slice(-500);
    for (const [, done] of this.pending) done({ ok: false, error: `probe agent in ${this.where} exited${words ? `: ${words}` : ''}` });
    this.pending.clear();
    this.exitResolve();
  }

  /** its first answer (id 0): ready, with its id, or why it could not start */
  protected async first(signal?: AbortSignal): Promise<Reply> {
    const reply = await this.wait(0, START_TIMEOUT_MS, signal);
    if (reply.ok && typeof reply.pid === 'number') this.id = reply.pid;
    return reply;
  }

  async ready(signal?: AbortSignal): Promise<void> {
    const reply = await this.first(signal);
    if (!reply.ok) throw new PodscopeError('RuntimeError', `cannot start the probe agent in ${this.where}: ${String(reply.error)}`);
  }

  /** Closes every responder; false when the agent could not (it is then ended, not kept). */
  async reset(): Promise<boolean> {
    if (!this.alive || this.pending.size > 0) return false;
    return (await this.request({ op: 'reset' })).ok === true;
  }

  private wait(id: number, timeoutMs: number, signal?: AbortSignal): Promise<Reply> {
    return new Promise((resolve) => {
      if (this.exited) return resolve({ ok: false, error: `probe agent in ${this.where} has exited` });
      const timer = setTimeout(() => {
        this.pending.delete(id);
        signal?.removeEventListener('abort', onAbort);
        resolve({ ok: false, error: 'probe agent did not answer in time' });
      }, timeoutMs);
      const onAbort = () => {
        this.pending.delete(id);
        clearTimeout(timer);
        resolve({ ok: false, error: 'canceled' });
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, (r) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      });
    });
  }

  private async request(body: Reply): Promise<Reply> {
    const id = this.nextId++;
    const answer = this.wait(id, REQUEST_TIMEOUT_MS);
    if (!this.exited) this.send({ ...body, id });
    return answer;
  }

  async listeners(): Promise<number[]> {
    const r = await this.request({ op: 'listeners' });
    if (!r.ok) throw new PodscopeError('RuntimeError', `listing TCP listeners in ${this.where}: ${String(r.error)}`);
    return r.ports as number[];
  }

  async respond(port: number, banner: string, address?: string): Promise<number> {
    const r = await this.request({ op: 'respond', port, banner, address });
    if (!r.ok)
      throw new PodscopeError('RuntimeError', `cannot open a responder on ${address ?? '*'}:${port} in ${this.where}: ${String(r.error)}`);
    return r.port as number;
  }

  async connect(
    host: string,
    port: number,
    timeoutMs: number,
    bannerMs: number,
    opts: { resetIfBanner?: string; localPort?: number } = {},
  ): Promise<ConnectOutcome> {
    const r = await this.request({
      op: 'connect',
      host,
      port,
      timeoutMs,
      bannerMs,
      resetIfBanner: opts.resetIfBanner,
      localPort: opts.localPort,
    });
    if (!r.ok) return { kind: 'error', error: String(r.error) };
    return r.outcome as ConnectOutcome;
  }

  async dns(
    server: string,
    port: number,
    name: string,
    qtype: 'A' | 'AAAA' | 'NS',
    timeoutMs: number,
    opts: { localPort?: number } = {},
  ): Promise<DnsOutcome> {
    const r = await this.request({ op: 'dns', server, port, name, qtype, timeoutMs, localPort: opts.localPort });
    if (!r.ok) return { kind: 'error', error: String(r.error) };
    return r.outcome as DnsOutcome;
  }

  async ping(host: string, size: number, timeoutMs: number): Promise<PingOutcome> {
    const r = await this.request({ op: 'ping', host, size, timeoutMs });
    if (!r.ok) return { kind: 'error', error: String(r.error) };
    return r.outcome as PingOutcome;
  }

  /** Ends the agent: its input's end (it closes its responders and kills its pings), then a kill after a grace period. */
  async close(): Promise<void> {
    if (this.exited) return;
    this.end();
    const timer = setTimeout(() => this.kill(), EXIT_GRACE_MS);
    await this.exitPromise;
    clearTimeout(timer);
  }
}

/** An agent process: `node -e`, or `nsenter --net=<path> -- node -e` (nsenter execs, so its pid is the agent's). */
export class ChildAgent extends AgentConnection {
  readonly kind = 'process';
  private buffer = '';
  private readonly child: ChildProcess;

  constructor(nodePath: string, netnsPath: string | undefined) {
    super(netnsPath ?? 'host');
    const [file, args] =
      netnsPath === undefined ? [nodePath, ['-e', AGENT_SCRIPT]] : ['nsenter', [`--net=${netnsPath}`, '--', nodePath, '-e', AGENT_SCRIPT]];
    // ELECTRON_RUN_AS_NODE: inside the Electron main, execPath is the Electron binary
    const child = spawn(file, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
    this.child = child;
    child.once('exit', () => this.gone());
    // spawn failure (nsenter or node missing): no 'exit' follows
    child.once('error', (e) => {
      this.lastWords += e.message;
      this.gone();
    });
    child.stdin!.on('error', () => undefined);
    child.stderr!.on('data', (b: Buffer) => {
      this.lastWords = (this.lastWords + b.toString()).slice(-4000);
    });
    child.stdout!.on('data', (b: Buffer) => {
      this.buffer += b.toString('utf8');
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        try {
          this.answer(JSON.parse(line) as Reply);
        } catch {
          // not ours: ignore
        }
      }
    });
  }

  // the pid is known at spawn, before the agent says it is ready
  override get pid(): number | undefined {
    return this.child.pid;
  }

  override get alive(): boolean {
    return super.alive && this.child.exitCode === null && this.child.signalCode === null;
  }

  protected send(body: Reply): void {
    this.child.stdin!.write(`${JSON.stringify(body)}\n`);
  }

  protected end(): void {
    this.child.stdin!.end();
  }

  /** SIGKILL to its process group: the agent and the pings it started */
  protected kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  override async close(): Promise<void> {
    if (this.child.pid === undefined || !this.alive) return;
    return super.close();
  }

  idle(): void {
    this.child.unref();
    for (const pipe of this.pipes()) pipe.unref();
  }

  inUse(): void {
    this.child.ref();
    for (const pipe of this.pipes()) pipe.ref();
  }

  /** stdin, stdout and stderr: spawned with 'pipe', each is a net.Socket (typed only as a stream) */
  private pipes(): Socket[] {
    return [this.child.stdin, this.child.stdout, this.child.stderr] as Socket[];
  }
}

/** An agent thread: a worker of this process, in the netns at netnsPath (entered with setns) or in this process's. */
export class ThreadAgent extends AgentConnection {
  readonly kind = 'thread';
  private readonly worker: Worker;

  /** @param ffi koffi's native file (koffiNativeFile), needed only to enter another netns */
  constructor(netnsPath: string | undefined, ffi: string | undefined) {
    super(netnsPath ?? 'host');
    const worker = new Worker(AGENT_SCRIPT, { eval: true, workerData: { netns: netnsPath, ffi } });
    this.worker = worker;
    worker.on('message', (m: Reply) => this.answer(m));
    // an uncaught error in the agent: 'exit' follows
    worker.once('error', (e) => {
      this.lastWords += e.message;
    });
    worker.once('exit', () => this.gone());
  }

  /** Ready, or ThreadEnterRefused when koffi did not load or setns failed (a process agent may still get in). */
  override async ready(signal?: AbortSignal): Promise<void> {
    const reply = await this.first(signal);
    if (reply.ok) return;
    const stage = reply.stage as AgentEnterStage | undefined;
    // one line (a failed require adds its require stack)
    const error = String(reply.error).split('\n')[0];
    if (stage === 'ffi' || stage === 'setns')
      throw new ThreadEnterRefused(
        stage,
        `${stage === 'ffi' ? 'koffi did not load' : 'setns refused'}: ${error}`,
        stage === 'ffi' || reply.errno === EPERM,
      );
    throw new PodscopeError('RuntimeError', `cannot start the probe agent in ${this.where}: ${error}`);
  }

  protected send(body: Reply): void {
    this.worker.postMessage(body);
  }

  protected end(): void {
    this.worker.postMessage('end');
  }

  protected kill(): void {
    void this.worker.terminate();
  }

  idle(): void {
    this.worker.unref();
  }

  inUse(): void {
    this.worker.ref();
  }
}
