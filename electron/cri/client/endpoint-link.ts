/**
 * The connection every part of a CRI endpoint client shares: dialed (and its Version checked) on first use, retried
 * after a failed attempt, refused once closed; and the small reads several parts need.
 */
import { notSupported, PodscopeError } from '../../../shared/domain/errors';
import type { CriConnection, CriConnectionOptions } from './connection';
import { connectCri } from './connection';
import { RUNTIME_NAME } from '../server/version';

export interface EndpointLink {
  readonly address: string;
  readonly socketPath: string;
  connected(): Promise<CriConnection>;
  close(): void;
}

export function createEndpointLink(target: { address: string; socketPath: string }, opts: CriConnectionOptions): EndpointLink {
  let connecting: Promise<CriConnection> | undefined;
  let closed = false;
  return {
    address: target.address,
    socketPath: target.socketPath,
    connected() {
      if (closed) return Promise.reject(new PodscopeError('Unavailable', `CRI endpoint ${target.socketPath} was closed`));
      // a failed attempt is forgotten so the next call retries (the runtime may start later)
      connecting ??= connectCri(target.address, opts).catch((e: unknown) => {
        connecting = undefined;
        throw e;
      });
      return connecting;
    },
    close() {
      closed = true;
      connecting?.then(
        (c) => c.close(),
        () => undefined,
      );
    },
  };
}

/** "containerd 1.6.20", for messages */
export const describeRuntime = (conn: CriConnection) => `${conn.version.runtimeName} ${conn.version.runtimeVersion}`;

export const isPodscopeConn = (conn: CriConnection) => conn.version.runtimeName === RUNTIME_NAME;

/** What CRI cannot carry: `feature` names it for the one NotSupportedError, `what` for the person. */
export const unimplemented = (feature: string, what: string, runtime: string) =>
  notSupported(feature, `${what} is not available from ${runtime} over CRI`);

/** Runs fn over the items, at most `limit` at a time (a runtime with hundreds of pods is not sent hundreds at once). */
export async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** How many PodSandboxStatus (or ContainerStatus) calls a full list has in flight at once. */
export const LIST_STATUS_CONCURRENCY = 8;
