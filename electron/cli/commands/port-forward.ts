import { createServer, type Server, type Socket } from 'node:net';
import { PodscopeError } from '../../../shared/domain/errors';
import { parseCommandArgs } from '../args';
import { withStreaming } from '../streaming';
import { untilSignal } from '../../host/serve';

export const help = `podscope port-forward [flags] POD [LOCAL:]REMOTE...
  Forwards 127.0.0.1:LOCAL to port REMOTE inside the pod's network namespace until ^C, as crictl port-forward.
  Each accepted connection is its own stream (PortForward RPC and URL with --endpoint). LOCAL empty or 0 picks a
  free port; the chosen one is printed. Ends when the pod is stopped or removed (the local port would only refuse),
  saying so, with exit code 3 (removed) or 5 (stopped).
  --address ADDR   local address to listen on (default 127.0.0.1)`;

/** how often the pod is looked at while forwarding */
export const POD_WATCH_MS = 1000;
/** how long a stopped pod is watched for its removal before forwarding ends as "stopped" */
const STOP_THEN_REMOVE_MS = 3000;

/**
 * Resolves with why forwarding to the pod can no longer work (a PodscopeError: NotFound when it was removed,
 * FailedPrecondition when it was stopped, and not removed within `stopThenRemoveMs`), checking every `everyMs` until
 * `signal` aborts.
 */
export async function podGone(
  status: (id: string) => Promise<{ state: string; metadata: { name: string } }>,
  sandboxId: string,
  name: string,
  signal: AbortSignal,
  everyMs = POD_WATCH_MS,
  stopThenRemoveMs = STOP_THEN_REMOVE_MS,
): Promise<PodscopeError | undefined> {
  const removed = () => new PodscopeError('NotFound', `pod ${name} was removed; port-forward ended`);
  const stopped = () => new PodscopeError('FailedPrecondition', `pod ${name} was stopped; port-forward ended`);
  /** 'ready', 'stopped', 'removed', or undefined when the daemon could not be asked (busy: look again) */
  const look = async (): Promise<'ready' | 'stopped' | 'removed' | undefined> => {
    try {
      return (await status(sandboxId)).state === 'SANDBOX_READY' ? 'ready' : 'stopped';
    } catch (e) {
      return e instanceof PodscopeError && e.code === 'NotFound' ? 'removed' : undefined;
    }
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());
  while (!signal.aborted) {
    await pause(everyMs);
    if (signal.aborted) return undefined;
    const now = await look();
    if (now === 'removed') return removed();
    if (now !== 'stopped') continue;
    // a remove of a running pod stops it first (CNI DEL, the pause ended), which takes seconds on a busy machine:
    // look a little longer before saying "stopped" for what is a removal
    for (let waited = 0; waited < stopThenRemoveMs && !signal.aborted; waited += everyMs / 4) {
      await pause(everyMs / 4);
      if ((await look()) === 'removed') return removed();
    }
    return signal.aborted ? undefined : stopped();
  }
  return undefined;
}

export interface PortPair {
  local: number;
  remote: number;
}

/** "8080:80", ":80", "80" (same port locally), as kubectl/crictl take them */
export function parsePortPair(text: string): PortPair {
  const m = /^(\d*):(\d+)$/.exec(text) ?? /^()(\d+)$/.exec(text);
  const local = m?.[1] === '' ? (text.includes(':') ? 0 : Number(m[2])) : Number(m?.[1]);
  const remote = Number(m?.[2]);
  const ok = (n: number, min: number) => Number.isInteger(n) && n >= min && n <= 65535;
  if (!m || !ok(remote, 1) || !ok(local, 0))
    throw new PodscopeError('InvalidArgument', `port ${JSON.stringify(text)}: want [LOCAL:]REMOTE with ports 1-65535`);
  return { local, remote };
}

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { address: { type: 'string' } });
  const [pod, ...specs] = positionals;
  if (!pod || specs.length === 0) throw new PodscopeError('InvalidArgument', 'port-forward takes POD [LOCAL:]REMOTE...');
  const pairs = specs.map(parsePortPair);
  const address = (flags.address as string | undefined) ?? '127.0.0.1';
  return withStreaming(flags, async (streaming, api) => {
    // a wrong pod id fails here, not on the first connection
    const first = await api.status(pod);
    const sandboxId = first.id;
    const servers: Server[] = [];
    const open = new Set<Socket>();
    try {
      for (const { local, remote } of pairs) {
        const server = createServer({ allowHalfOpen: true }, (sock) => {
          open.add(sock);
          sock.once('close', () => open.delete(sock));
          process.stderr.write(`Handling connection for ${remote}\n`);
          streaming.portForward({ sandboxId, port: remote, stream: sock }).catch((e: unknown) => {
            process.stderr.write(`port-forward ${remote}: ${e instanceof Error ? e.message : String(e)}\n`);
            sock.destroy();
          });
        });
        await new Promise<void>((resolve, reject) => {
          server.once('error', (e) => reject(new PodscopeError('Unavailable', `cannot listen on ${address}:${local}: ${e.message}`)));
          server.listen(local, address, () => resolve());
        });
        servers.push(server);
        const port = (server.address() as { port: number }).port;
        process.stdout.write(`Forwarding from ${address}:${port} -> ${remote}\n`);
      }
      const stop = new AbortController();
      const gone = await Promise.race([
        untilSignal().then(() => undefined),
        podGone((id) => api.status(id), sandboxId, first.metadata.name, stop.signal),
      ]);
      stop.abort();
      if (gone) throw gone;
      return 0;
    } finally {
      for (const s of servers) s.close();
      for (const s of open) s.destroy();
    }
  });
}
