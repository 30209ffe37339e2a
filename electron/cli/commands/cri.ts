import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { PodscopeError } from '../../../shared/domain/errors';
import { engineOptionsFromFlags, parseCommandArgs } from '../args';
import type { Flags } from '../../core/engine-flags';
import type { EngineOptions } from '../../engine/api';
import { untilSignal } from '../../host/serve';

export const help = `podscope cri [flags]
  Serves the Kubernetes CRI (runtime.v1) on a unix socket for crictl, critest and the Podscope app.
  --socket PATH    (default /run/podscope/podscope.sock, mode 0660)
  --group GROUP    group (name or gid) that owns the socket, so a non-root GUI user in it can connect
  --stream-address ADDR   address of the streaming server behind Exec/Attach/PortForward (default 127.0.0.1)
  --stream-port N         its port (default 0: any free port)
  --stream-tls-cert FILE, --stream-tls-key FILE   serve the streaming URLs over https (PEM)
  --probe-on-ready  measure each sandbox's reachability once it is ready (off here: CRI clients cannot read it)`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, {
    socket: { type: 'string' },
    group: { type: 'string' },
    'stream-address': { type: 'string' },
    'stream-port': { type: 'string' },
    'stream-tls-cert': { type: 'string' },
    'stream-tls-key': { type: 'string' },
  });
  const streaming = streamingFlags(flags);
  const { createEngine } = await import('../../engine/api');
  const { startCriServer, DEFAULT_CRI_SOCKET } = await import('../../cri/server');
  const group = typeof flags.group === 'string' ? resolveGroup(flags.group) : undefined;
  const engine = await createEngine(criEngineOptions(flags));
  const server = await startCriServer({
    engine,
    socketPath: (flags.socket as string | undefined) ?? DEFAULT_CRI_SOCKET,
    group,
    streaming,
  });
  process.stderr.write(`serving CRI runtime.v1 on ${server.socketPath}${group !== undefined ? ` (group ${group})` : ''}\n`);
  process.stderr.write(
    server.streamingUrl
      ? `streaming (exec, attach, port-forward) on ${server.streamingUrl}\n`
      : 'streaming: not available from this engine\n',
  );
  await untilSignal();
  await server.close();
  await engine.close();
  return 0;
}

/**
 * The engine options of `podscope cri`: probe-on-ready is off unless asked for. A probe's report is read over IPC
 * (the app's own engine), never over CRI, so here it would be work nobody sees, done after every RunPodSandbox:
 * a Node agent in the pod and in each ready peer on its network, competing with the next CRI call for the CPU.
 */
export function criEngineOptions(flags: Record<string, unknown>): Partial<EngineOptions> {
  return { probeOnReady: false, ...engineOptionsFromFlags(flags as Flags) };
}

function resolveGroup(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  try {
    return Number(execFileSync('getent', ['group', text], { encoding: 'utf8' }).split(':')[2]);
  } catch {
    throw new PodscopeError('InvalidArgument', `--group: no group named ${JSON.stringify(text)}`);
  }
}

/** --stream-* flags as the CRI server's streaming options (containerd's stream_server_address/port, TLS) */
export function streamingFlags(flags: Record<string, unknown>): { address?: string; port?: number; tls?: { cert: Buffer; key: Buffer } } {
  const out: { address?: string; port?: number; tls?: { cert: Buffer; key: Buffer } } = {};
  if (typeof flags['stream-address'] === 'string') out.address = flags['stream-address'];
  if (typeof flags['stream-port'] === 'string') {
    const port = Number(flags['stream-port']);
    if (!/^\d+$/.test(flags['stream-port']) || port > 65535) throw new PodscopeError('InvalidArgument', '--stream-port must be 0-65535');
    out.port = port;
  }
  const cert = flags['stream-tls-cert'];
  const key = flags['stream-tls-key'];
  if ((typeof cert === 'string') !== (typeof key === 'string')) {
    throw new PodscopeError('InvalidArgument', '--stream-tls-cert and --stream-tls-key go together');
  }
  if (typeof cert === 'string' && typeof key === 'string') out.tls = { cert: readFileSync(cert), key: readFileSync(key) };
  return out;
}
