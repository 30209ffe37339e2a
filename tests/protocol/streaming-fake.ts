/**
 * A small ContainerStreaming for protocol tests: scripted "processes" chosen by cmd[0], and port-forward to a real
 * loopback TCP server, so the streaming server and client are exercised over real sockets without runc.
 */
import { connect, createServer, type Server } from 'node:net';
import type { ContainerStreaming, ExecStreamRequest, TerminalSize } from '../../electron/engine/containers/streaming';
import { PodscopeError } from '../../shared/domain/errors';

export interface FakeStreaming extends ContainerStreaming {
  /** what each exec saw: the request's container, cmd and tty, and the resizes it received */
  calls: { containerId: string; cmd: string[]; tty: boolean; sizes: TerminalSize[] }[];
  /** ports that portForward reaches (pod port → loopback server port) */
  ports: Map<number, number>;
  close(): Promise<void>;
}

/** a loopback TCP "pod" that answers each chunk in upper case and closes after the client half-closes */
export async function upperCaseServer(): Promise<{ port: number; server: Server }> {
  const server = createServer({ allowHalfOpen: true }, (s) => {
    s.on('data', (d) => s.write(d.toString().toUpperCase()));
    s.on('end', () => s.end());
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server };
}

export function fakeStreaming(): FakeStreaming {
  const calls: FakeStreaming['calls'] = [];
  const ports = new Map<number, number>();
  const exec = async (req: ExecStreamRequest): Promise<{ exitCode: number }> => {
    if (req.containerId === 'missing') throw new PodscopeError('NotFound', `container ${req.containerId} not found`);
    const call = { containerId: req.containerId, cmd: req.cmd, tty: req.tty, sizes: [] as TerminalSize[] };
    calls.push(call);
    const [prog, ...args] = req.cmd;
    switch (prog) {
      case 'cat': {
        // echoes stdin to stdout until EOF
        if (!req.stdin) return { exitCode: 0 };
        for await (const chunk of req.stdin) req.stdout?.write(chunk);
        return { exitCode: 0 };
      }
      case 'split':
        // stdout and stderr apart, then exit with the code given
        req.stdout?.write('to stdout\n');
        req.stderr?.write('to stderr\n');
        return { exitCode: Number(args[0] ?? 0) };
      case 'big': {
        const n = Number(args[0]);
        const block = Buffer.alloc(64 * 1024, 'x');
        for (let sent = 0; sent < n; sent += block.length) {
          if (!req.stdout?.write(block.subarray(0, Math.min(block.length, n - sent))))
            await new Promise((r) => req.stdout?.once('drain', r));
        }
        return { exitCode: 0 };
      }
      case 'resize': {
        // reports each terminal size, exits after the number of sizes asked for
        const want = Number(args[0] ?? 1);
        await new Promise<void>((resolve) => {
          const unsubscribe = req.resize?.subscribe((size) => {
            call.sizes.push(size);
            req.stdout?.write(`size ${size.width}x${size.height}\r\n`);
            if (call.sizes.length >= want) {
              unsubscribe?.();
              resolve();
            }
          });
        });
        return { exitCode: 0 };
      }
      case 'wait-abort':
        await new Promise<void>((resolve) => req.signal?.addEventListener('abort', () => resolve(), { once: true }));
        return { exitCode: 137 };
      default:
        throw new PodscopeError('InvalidArgument', `no such program ${prog}`);
    }
  };
  return {
    calls,
    ports,
    exec,
    async attach(req) {
      await exec({ ...req, cmd: ['cat'] });
    },
    async portForward(req) {
      const target = ports.get(req.port);
      if (target === undefined) throw new PodscopeError('FailedPrecondition', `nothing listens on port ${req.port}`);
      const sock = connect({ host: '127.0.0.1', port: target, allowHalfOpen: true });
      await new Promise<void>((resolve, reject) => {
        sock.once('connect', resolve);
        sock.once('error', reject);
      });
      req.stream.pipe(sock);
      sock.pipe(req.stream);
      await new Promise<void>((resolve) => sock.once('close', () => resolve()));
    },
    async close() {},
  };
}
