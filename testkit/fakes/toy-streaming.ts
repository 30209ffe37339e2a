/**
 * A tiny ContainerStreaming for tests above the streaming boundary (IPC stream sessions, the terminal, log and
 * port-forward screens) while no fake container runtime can exec: it is not a shell, only enough of one to show that
 * bytes, resizes, exit codes and aborts cross the interface. For tests only: product code never imports this.
 *   exec ["sh"] (or attach): a line-based toy shell: `echo X` prints X, `stty size` prints "ROWS COLS" of the last
 *     resize, `exit N` ends with N; EOF on stdin ends with 0.
 *   exec ["flood", N]: writes N bytes to stdout honouring backpressure (write() false ⇒ wait for drain).
 *   exec ["false"]: exits 1 at once.
 *   portForward: pipes the client stream to `targets[port]` (a loopback TCP address the test owns).
 * `running` counts processes and forwarded connections not yet ended, so a test can assert nothing is left.
 */
import { connect } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { PodscopeError } from '../../shared/domain/errors';
import type {
  AttachRequest,
  ContainerStreaming,
  ExecStreamRequest,
  ExecStreamResult,
  PortForwardRequest,
  TerminalSize,
} from '../../electron/engine/containers/streaming';

export class ToyStreaming implements ContainerStreaming {
  running = 0;
  /** every exec's argv, in order */
  readonly execs: string[][] = [];
  readonly resizes: TerminalSize[] = [];
  /** bytes written by the last `flood` so far */
  flooded = 0;
  readonly targets = new Map<number, { host: string; port: number }>();
  /** container ids that exist (others are NotFound); empty: all exist */
  readonly containers = new Set<string>();

  async exec(req: ExecStreamRequest): Promise<ExecStreamResult> {
    if (this.containers.size && !this.containers.has(req.containerId))
      throw new PodscopeError('NotFound', `container ${req.containerId} not found`);
    this.execs.push(req.cmd);
    this.running++;
    try {
      const [prog, arg] = req.cmd;
      if (prog === 'false') return { exitCode: 1 };
      // a process SIGKILLed with its container, before the engine has seen the container go
      if (prog === 'killed') return { exitCode: 137 };
      // runc's answer for an exec that reaches a container as it stops
      if (prog === 'too-late') throw new PodscopeError('RuntimeError', 'runc exec failed: exec failed: cannot exec in a stopped container');
      // an exec whose end the runtime could not report (its process went with the container, no exit code read)
      if (prog === 'lost') throw new PodscopeError('RuntimeError', 'runc exec: the process ended with no exit status');
      if (prog === 'flood') return await this.flood(Number(arg), req.stdout!, req.signal);
      return { exitCode: await this.shell(req) };
    } finally {
      this.running--;
    }
  }

  async attach(req: AttachRequest): Promise<void> {
    this.running++;
    try {
      await this.shell(req);
    } finally {
      this.running--;
    }
  }

  async portForward(req: PortForwardRequest): Promise<void> {
    const target = this.targets.get(req.port);
    if (!target) throw new PodscopeError('FailedPrecondition', `nothing listens on port ${req.port} in the pod`);
    this.running++;
    try {
      await new Promise<void>((resolve) => {
        const upstream = connect(target.port, target.host);
        const end = () => {
          upstream.destroy();
          req.stream.destroy();
          resolve();
        };
        upstream.on('error', end).on('close', end);
        req.stream.on('error', end).on('close', end);
        req.signal?.addEventListener('abort', end, { once: true });
        req.stream.pipe(upstream).pipe(req.stream);
      });
    } finally {
      this.running--;
    }
  }

  private async flood(n: number, out: Writable, signal?: AbortSignal): Promise<ExecStreamResult> {
    this.flooded = 0;
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    while (this.flooded < n) {
      if (signal?.aborted) return { exitCode: 137 };
      const piece = chunk.subarray(0, Math.min(chunk.length, n - this.flooded));
      this.flooded += piece.length;
      if (!out.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            out.off('drain', done);
            signal?.removeEventListener('abort', done);
            resolve();
          };
          out.once('drain', done);
          signal?.addEventListener('abort', done, { once: true });
        });
      }
    }
    return { exitCode: 0 };
  }

  private shell(req: {
    stdin: Readable | null;
    stdout: Writable | null;
    stderr: Writable | null;
    tty: boolean;
    resize?: { subscribe(l: (s: TerminalSize) => void): () => void };
    signal?: AbortSignal;
  }): Promise<number> {
    const nl = req.tty ? '\r\n' : '\n';
    let size: TerminalSize = { width: 80, height: 24 };
    const unsubscribe = req.resize?.subscribe((s) => {
      size = s;
      this.resizes.push(s);
    });
    return new Promise<number>((resolve) => {
      let buf = '';
      let done = false;
      const finish = (code: number) => {
        if (done) return;
        done = true;
        unsubscribe?.();
        req.stdin?.off('data', onData);
        resolve(code);
      };
      const run = (line: string) => {
        const cmd = line.trim();
        if (cmd.startsWith('echo ')) req.stdout?.write(`${cmd.slice(5)}${nl}`);
        else if (cmd === 'stty size' || cmd === 'busybox stty size') req.stdout?.write(`${size.height} ${size.width}${nl}`);
        else if (cmd.startsWith('exit')) finish(Number(cmd.slice(4).trim() || 0));
        else if (cmd) (req.tty ? req.stdout : req.stderr)?.write(`sh: ${cmd.split(' ')[0]}: not found${nl}`);
        if (!done) req.stdout?.write('$ ');
      };
      const onData = (d: Buffer) => {
        const text = d.toString('utf8');
        // a tty echoes what is typed, as a real line discipline would
        if (req.tty) req.stdout?.write(text.replace(/\r/g, '\r\n'));
        buf += text.replace(/\r/g, '\n');
        let i;
        while (!done && (i = buf.indexOf('\n')) >= 0) {
          run(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      };
      req.stdout?.write('$ ');
      req.stdin?.on('data', onData);
      req.stdin?.on('end', () => finish(0));
      if (!req.stdin) finish(0);
      req.signal?.addEventListener('abort', () => finish(137), { once: true });
    });
  }
}
