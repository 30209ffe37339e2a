/**
 * Port-forwards: a listening port on 127.0.0.1 whose every connection is streamed into the pod's network namespace.
 * Each ends with its owner, or with its pod: a stopped or removed pod's forward would only refuse, and a listening
 * port would say otherwise, so it closes and says why (portForward.closed).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { ContainerEvent } from '../../../shared/domain/container';
import { PodscopeError } from '../../../shared/domain/errors';
import type { SandboxEvent } from '../../../shared/domain/sandbox';
import type { PortForwardView } from '../../../shared/domain/streams';
import type { PushedEvent } from '../../../shared/ipc/events';
import type { ContainerStreaming } from '../../engine/api';

interface Forward {
  view: PortForwardView;
  owner: string;
  server: Server;
  sockets: Set<Socket>;
  abort: AbortController;
  podName?: string;
}

export interface PortForwardDeps {
  emit(event: PushedEvent, owner: string): void;
  sandboxName?(endpointId: string, podSandboxId: string): Promise<string | undefined>;
  /** how long a forward to a stopped pod waits for the pod's removal to say that instead (ms) */
  exitGraceMs?: number;
}

export class PortForwards {
  private readonly forwards = new Map<string, Forward>();

  constructor(private readonly deps: PortForwardDeps) {}

  async open(
    owner: string,
    req: { endpointId: string; podSandboxId: string; port: number; hostPort: number },
    streaming: ContainerStreaming,
  ): Promise<PortForwardView> {
    const abort = new AbortController();
    const sockets = new Set<Socket>();
    const server = createServer();
    const id = randomUUID();
    const view: PortForwardView = {
      id,
      endpointId: req.endpointId,
      podSandboxId: req.podSandboxId,
      port: req.port,
      hostAddress: '127.0.0.1',
      hostPort: 0,
      connections: 0,
    };
    server.on('connection', (socket) => {
      sockets.add(socket);
      view.connections++;
      socket.on('error', () => socket.destroy());
      streaming
        .portForward({ sandboxId: req.podSandboxId, port: req.port, stream: socket, signal: abort.signal })
        .catch(() => {
          // the pod's port refused or the pod is gone: the client sees its connection closed, like kubectl's
        })
        .finally(() => {
          socket.destroy();
          sockets.delete(socket);
        });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          e.code === 'EADDRINUSE'
            ? new PodscopeError('AlreadyExists', `host port ${req.hostPort} is in use on 127.0.0.1`, { details: { field: 'hostPort' } })
            : e,
        ),
      );
      // loopback only: a forward must not open the pod to the network
      server.listen(req.hostPort, '127.0.0.1', () => resolve());
    });
    view.hostPort = (server.address() as AddressInfo).port;
    const forward: Forward = { view, owner, server, sockets, abort };
    this.forwards.set(id, forward);
    void this.deps.sandboxName?.(req.endpointId, req.podSandboxId).then(
      (name) => (forward.podName = name),
      () => undefined,
    );
    return { ...view };
  }

  async close(owner: string, id: string): Promise<void> {
    const f = this.forwards.get(id);
    if (!f || f.owner !== owner) return;
    this.forwards.delete(id);
    f.abort.abort();
    for (const s of f.sockets) s.destroy();
    await new Promise<void>((r) => f.server.close(() => r()));
  }

  list(owner?: string): PortForwardView[] {
    return this.ofOwner(owner).map((f) => ({ ...f.view }));
  }

  /** the ids and owners of the open forwards (an owner's, or all) */
  ofOwner(owner?: string): Array<{ view: PortForwardView; owner: string }> {
    return [...this.forwards.values()].filter((f) => owner === undefined || f.owner === owner);
  }

  /** A pod was removed (its forwards end now) or stopped (after a moment, so a remove says "removed"). */
  notify(endpointId: string, event: SandboxEvent | ContainerEvent): void {
    const pod = (id: string) => (f: Forward) => f.view.endpointId === endpointId && f.view.podSandboxId === id;
    switch (event.type) {
      case 'sandbox.removed':
        for (const f of [...this.forwards.values()].filter(pod(event.id)))
          void this.end(f, `pod ${f.podName ?? event.id.slice(0, 13)} was removed`);
        break;
      case 'sandbox.changed':
        if (event.summary.state !== 'SANDBOX_NOTREADY') break;
        // a remove stops a running pod first: wait a moment so that one says "removed", not "stopped"
        for (const f of [...this.forwards.values()].filter(pod(event.id)))
          setTimeout(() => void this.end(f, `pod ${event.summary.metadata.name} was stopped`), this.deps.exitGraceMs ?? 1000).unref();
        break;
      default:
        break;
    }
  }

  private async end(f: Forward, reason: string): Promise<void> {
    if (!this.forwards.has(f.view.id)) return;
    await this.close(f.owner, f.view.id);
    this.deps.emit({ kind: 'portForward.closed', id: f.view.id, reason }, f.owner);
  }
}
