/**
 * The CRI runtime.v1 server: grpc-js on a unix socket, each RPC a small adapter over the engine. RPCs not in
 * runtime_v1.proto are answered UNIMPLEMENTED by grpc-js itself (unknown method path). The same socket serves the
 * ImageService (image-service.ts) over the engine's image store.
 *
 * Socket access: the socket ends up with `mode` (default 0660) and, when `group` is given, that gid, so the GUI
 * running as a normal user in that group can drive a root daemon. How it gets there safely (socket-path.ts):
 * the socket's directory (created 0755 when missing) must be owned by this uid or root and writable by nobody else,
 * and so must every directory above it unless sticky; the socket is bound in a private 0700 directory inside it,
 * given its owner and mode there, checked with lstat, and renamed into place — so no other user can connect before
 * the mode is right or swap the path for a symlink that chmod/chown would follow.
 */
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { ImageServiceService, type RuntimeServiceServer } from '../generated/runtime_v1';
import { authorityFixingStream } from './authority-shim';
import { imageServiceImpl } from './image-service';
import { serveContainerEvents } from './container-events';
import { bindPrivately, clearStaleSocket, prepareSocketDir, removeOwnSocket, type BoundSocket } from './socket-path';
import { normalizeAddress } from '../address';
import { unary, type CriEngine } from './handler';
import { runtimeConfigResponse, statusResponse } from './runtime-status';
import { runPodSandbox } from './sandbox-run';
import { stopPodSandbox } from './sandbox-stop';
import { removePodSandbox } from './sandbox-remove';
import { podSandboxStatus } from './sandbox-status';
import { listPodSandbox } from './sandbox-list';
import { versionResponse } from './version';
import { createContainer } from './container-create';
import { startContainer } from './container-start';
import { stopContainer } from './container-stop';
import { removeContainer } from './container-remove';
import { listContainers } from './container-list';
import { containerStatus } from './container-status';
import { updateContainerResources } from './container-update-resources';
import { reopenContainerLog } from './container-reopen-log';
import { execSync } from './container-exec-sync';
import { containerStats, listContainerStats } from './container-stats';
import { CachedRuntimeService } from './wire-cache';
import { exec } from './container-exec';
import { attach } from './container-attach';
import { portForward } from './sandbox-port-forward';
import { startStreamingServer, type StreamingServer, type StreamingServerOptions } from '../streaming/server';
import type { ContainerStreaming } from '../../engine/api';

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
  /** unflushed events a GetContainerEvents stream may hold before it is ended with RESOURCE_EXHAUSTED (default 1024) */
  eventsHighWaterMark?: number;
  /** how long the startup probe of an existing socket waits for it to accept (ms), default 1000 */
  staleProbeTimeoutMs?: number;
  /**
   * Rewrite Go clients' socket-path `:authority` (authority-shim.ts); default true. Off only to measure what the
   * shim costs (bench/cri-rpc-cost.ts): without it crictl/critest 1.26 get their streams reset.
   */
  authorityShim?: boolean;
  /**
   * The streaming server behind Exec/Attach/PortForward (containerd's stream_server_address/port, default
   * 127.0.0.1:0; TLS optional). Its sessions run on `streaming.streaming`, else on the engine's own `streaming`;
   * with neither, the three RPCs are UNIMPLEMENTED.
   */
  streaming?: Partial<Omit<StreamingServerOptions, 'streaming'>> & { streaming?: ContainerStreaming };
  /** told the method name (e.g. "listPodSandbox") of every RuntimeService call as it arrives: tests count RPCs */
  onCall?: (method: string) => void;
}

export interface CriServer {
  readonly socketPath: string;
  /** base URL of the streaming server, when there is one */
  readonly streamingUrl?: string;
  /** stops accepting calls, ends event streams, removes the socket file */
  close(): Promise<void>;
}

export async function startCriServer(options: CriServerOptions): Promise<CriServer> {
  const { engine } = options;
  const { socketPath } = normalizeAddress(options.socketPath ?? DEFAULT_CRI_SOCKET, { baseDir: process.cwd() });
  const mode = options.mode ?? 0o660;
  const runtimeVersion =
    options.runtimeVersion ??
    (await engine.info().then(
      (i) => i.version,
      () => '',
    ));

  await prepareSocketDir(socketPath);
  await clearStaleSocket(socketPath, options.staleProbeTimeoutMs ?? 1000);

  // engine.streaming is the engine's own ContainerStreaming (runc exec, attach, netns port-forward) when it has one
  const { streaming: givenStreaming, ...streamingListen } = options.streaming ?? {};
  const containerStreaming = givenStreaming ?? (engine as { streaming?: ContainerStreaming }).streaming;
  const streamServer: StreamingServer | undefined = containerStreaming
    ? await startStreamingServer({ ...streamingListen, streaming: containerStreaming })
    : undefined;

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
    createContainer: unary((req) => createContainer(engine, req)),
    startContainer: unary((req) => startContainer(engine, req)),
    stopContainer: unary((req) => stopContainer(engine, req)),
    removeContainer: unary((req) => removeContainer(engine, req)),
    listContainers: unary((req) => listContainers(engine, req)),
    containerStatus: unary((req) => containerStatus(engine, req)),
    updateContainerResources: unary((req) => updateContainerResources(engine, req)),
    reopenContainerLog: unary((req) => reopenContainerLog(engine, req)),
    execSync: unary((req) => execSync(engine, req)),
    exec: unary((req) => exec(engine, streamServer, req)),
    attach: unary((req) => attach(engine, streamServer, req)),
    portForward: unary((req) => portForward(engine, streamServer, req)),
    containerStats: unary((req) => containerStats(engine, req)),
    listContainerStats: unary((req) => listContainerStats(engine, req)),
    getContainerEvents: (call) => {
      // registers itself in `streams` synchronously and reports its own failures on the call
      void serveContainerEvents(engine, call, streams, { highWaterMark: options.eventsHighWaterMark });
    },
  };

  const { onCall } = options;
  if (onCall)
    for (const [name, fn] of Object.entries(impl) as Array<[string, (...a: unknown[]) => unknown]>)
      (impl as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
        onCall(name);
        return fn(...a);
      };

  const server = new Server();
  server.addService(CachedRuntimeService, impl);
  server.addService(ImageServiceService, imageServiceImpl(engine));
  // Not server.bindAsync: connections are accepted here and handed to grpc-js through a connection injector, each
  // wrapped so Go clients' socket-path `:authority` does not get their streams reset by nghttp2 (authority-shim.ts).
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const sockets = new Set<Socket>();
  const listener: NetServer = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    injector.injectConnection(options.authorityShim === false ? socket : authorityFixingStream(socket));
  });
  let bound: BoundSocket;
  try {
    bound = await bindPrivately(listener, socketPath, { mode, ...(options.group !== undefined && { group: options.group }) });
  } catch (e) {
    listener.close();
    injector.destroy();
    server.forceShutdown();
    await streamServer?.close();
    throw e;
  }
  // A failed accept (e.g. EMFILE) affects one client only; it must not take the daemon down as an unhandled 'error'.
  listener.on('error', () => undefined);

  let closing: Promise<void> | undefined;
  return {
    socketPath,
    ...(streamServer && { streamingUrl: streamServer.url }),
    close() {
      closing ??= (async () => {
        for (const end of [...streams]) end();
        const streamingClosed = streamServer?.close();
        const listenerClosed = new Promise<void>((resolve) => listener.close(() => resolve()));
        const dropSockets = () => {
          for (const socket of sockets) socket.destroy();
        };
        await new Promise<void>((resolve) => {
          // Unary calls get a moment to finish; then anything left is cut. tryShutdown also closes the sessions
          // that came in through the injector.
          const timer = setTimeout(() => {
            server.forceShutdown();
            dropSockets();
            resolve();
          }, 2000);
          server.tryShutdown(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        // Sessions are closed; their sockets close once flushed. A peer that keeps one open is cut after a second.
        const straggler = setTimeout(dropSockets, 1000);
        await listenerClosed;
        clearTimeout(straggler);
        await removeOwnSocket(socketPath, bound);
        await streamingClosed;
      })();
      return closing;
    },
  };
}
