import { execFileSync } from 'node:child_process';
import { PodscopeError } from '../../../shared/domain/errors';
import { engineOptionsFromFlags, parseCommandArgs } from '../args';
import { untilSignal } from '../../host/serve';

export const help = `podscope cri [flags]
  Serves the Kubernetes CRI (runtime.v1) on a unix socket for crictl, critest and the Podscope app.
  --socket PATH    (default /run/podscope/podscope.sock, mode 0660)
  --group GROUP    group (name or gid) that owns the socket, so a non-root GUI user in it can connect`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, { socket: { type: 'string' }, group: { type: 'string' } });
  const { createEngine } = await import('../../engine/index');
  const { startCriServer, DEFAULT_CRI_SOCKET } = await import('../../cri/server');
  const group = typeof flags.group === 'string' ? resolveGroup(flags.group) : undefined;
  const engine = await createEngine(engineOptionsFromFlags(flags));
  const server = await startCriServer({ engine, socketPath: (flags.socket as string | undefined) ?? DEFAULT_CRI_SOCKET, group });
  process.stderr.write(`serving CRI runtime.v1 on ${server.socketPath}${group !== undefined ? ` (group ${group})` : ''}\n`);
  await untilSignal();
  await server.close();
  await engine.close();
  return 0;
}

function resolveGroup(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  try {
    return Number(execFileSync('getent', ['group', text], { encoding: 'utf8' }).split(':')[2]);
  } catch {
    throw new PodscopeError('InvalidArgument', `--group: no group named ${JSON.stringify(text)}`);
  }
}
