/**
 * The CRI runtime.v1 server: grpc-js on a unix socket, each RPC a small adapter over the engine. RPCs not in
 * runtime_v1.proto are answered UNIMPLEMENTED by grpc-js itself (unknown method path). The same socket serves the
 * read-only ImageService subset (image-service.ts), since cri-client 1.26 checks the image endpoint on connect.
 *
 * Socket access: the socket is chmod'ed to `mode` (default 0660) and, when `group` is given, chown'ed to that gid,
 * so the GUI running as a normal user in that group can drive a root daemon. Its directory is created 0755.
 */
import { chmod, chown, lstat, mkdir, unlink } from 'node:fs/promises';
import { connect, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { PodscopeError } from '../../../shared/domain/errors';
import { ImageServiceService, RuntimeServiceService, type RuntimeServiceServer } from '../generated/runtime_v1';
import { toGrpcStatus } from '../errors';
import { authorityFixingStream } from './authority-shim';
import { imageServiceImpl } from './image-service';
import { serveContainerEvents } from './container-events';
import { unary, type CriEngine } from './handler';
import { runtimeConfigResponse, statusResponse } from './runtime-status';
import { runPodSandbox } from './sandbox-run';
import { stopPodSandbox } from './sandbox-stop';
import { removePodSandbox } from './sandbox-remove';
import { podSandboxStatus } from './sandbox-status';
import { listPodSandbox } from './sandbox-list';
import { versionResponse } from './version';

export const DEFAULT_CRI_SOCKET = '/run/podscope/podscope.sock';

export interface CriServerOptions {
  engine: CriEngine;
  /** default /run/podscope/podscope.sock; a `unix://` prefix is accepted */
  socketPath?: string;
  /** socket file mode, default 0o660 (owner and group may connect) */
  mode?: number;
  /** gid to own the socket (e.g. a "podscope" group the GUI user belongs to) */
  group?: number;
  /** runtime_version in Version; default engine.info().version */
  runtimeVersion?: string;
}

export interface CriServer {
  readonly socketPath: string;
  /** stops accepting calls, ends event streams, removes the socket file */
  close(): Promise<void>;
}

export function stripUnixScheme(address: string): string {
  return address.replace(/^unix:\/\//, '');
}

/** A leftover socket file from a dead server is removed; a live one means someone else serves this path. */
async function clearStaleSocket(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return;
  if (!st.isSocket()) throw new PodscopeError('FailedPrecondition', `${path} exists and is not a socket; refusing to replace it`);
  const alive = await new Promise<boolean>((resolve) => {
    const s = connect(path);
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
  if (alive) throw new PodscopeError('AlreadyExists', `another process is already serving ${path}`);
  await unlink(path);
}

export async function startCriServer(options: CriServerOptions): Promise<CriServer> {
  const { engine } = options;
  const socketPath = stripUnixScheme(options.socketPath ?? DEFAULT_CRI_SOCKET);
  const mode = options.mode ?? 0o660;
  const runtimeVersion = options.runtimeVersion ?? (await engine.info().then((i) => i.version, () => ''));

  await mkdir(dirname(socketPath), { recursive: true, mode: 0o755 });
  await clearStaleSocket(socketPath);

  const streams = new Set<() => void>();
  const impl: RuntimeServiceServer = {
    version: unary(async () => versionResponse(runtimeVersion)),
    status: unary((req) => statusResponse(engine, req)),
    runtimeConfig: unary(async () => runtimeConfigResponse()),
    runPodSandbox: unary((req) => runPodSandbox(engine, req)),
    stopPodSandbox: unary((req) => stopPodSandbox(engine, req)),
    removePodSandbox: unary((req) => removePodSandbox(engine, req)),
    podSandboxStatus: unary((req) => podSandboxStatus(engine, req)),
    listPodSandbox: unary((req) => listPodSandbox(engine, req)),
    getContainerEvents: (call) => {
      serveContainerEvents(engine, call).then(
        (end) => {
          streams.add(end);
          call.on('close', () => streams.delete(end));
          call.on('cancelled', () => streams.delete(end));
        },
        // a server stream reports failure by emitting 'error' with a status object (grpc-js ServerWritableStream)
        (e: unknown) => call.emit('error', toGrpcStatus(e)),
      );
    },
  };

  const server = new Server();
  server.addService(RuntimeServiceService, impl);
  server.addService(ImageServiceService, imageServiceImpl());
  // Not server.bindAsync: connections are accepted here and handed to grpc-js through a connection injector, each
  // wrapped so Go clients' socket-path `:authority` does not get their streams reset by nghttp2 (authority-shim.ts).
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const sockets = new Set<Socket>();
  const listener: NetServer = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    injector.injectConnection(authorityFixingStream(socket));
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', (err) => reject(new PodscopeError('Unavailable', `cannot listen on ${socketPath}: ${err.message}`, { cause: err })));
    listener.listen(socketPath, () => resolve());
  });
  // A failed accept (e.g. EMFILE) affects one client only; it must not take the daemon down as an unhandled 'error'.
  listener.on('error', () => undefined);
  try {
    if (options.group !== undefined) await chown(socketPath, process.getuid?.() ?? 0, options.group);
    await chmod(socketPath, mode);
  } catch (e) {
    listener.close();
    injector.destroy();
    server.forceShutdown();
    throw e;
  }

  let closing: Promise<void> | undefined;
  return {
    socketPath,
    close() {
      closing ??= (async () => {
        for (const end of [...streams]) end();
        const listenerClosed = new Promise<void>((resolve) => listener.close(() => resolve()));
        const dropSockets = () => { for (const socket of sockets) socket.destroy(); };
        await new Promise<void>((resolve) => {
          // Unary calls get a moment to finish; then anything left is cut. tryShutdown also closes the sessions
          // that came in through the injector.
          const timer = setTimeout(() => { server.forceShutdown(); dropSockets(); resolve(); }, 2000);
          server.tryShutdown(() => { clearTimeout(timer); resolve(); });
        });
        // Sessions are closed; their sockets close once flushed. A peer that keeps one open is cut after a second.
        const straggler = setTimeout(dropSockets, 1000);
        await listenerClosed;
        clearTimeout(straggler);
        await unlink(socketPath).catch(() => undefined);
      })();
      return closing;
    },
  };
}
