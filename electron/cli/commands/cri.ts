import { engineOptionsFromFlags, parseCommandArgs } from '../args';
import { waitForSignal } from './serve';

export const help = `podscope cri [flags]
  Serves the Kubernetes CRI (runtime.v1) on a unix socket for crictl, critest and the Podscope app.
  --socket PATH   (default /run/podscope/podscope.sock, mode 0660)`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, { socket: { type: 'string' } });
  const { createEngine } = await import('../../engine/index');
  const { startCriServer } = await import('../../cri/server');
  const engine = await createEngine(engineOptionsFromFlags(flags));
  const server = await startCriServer({ engine, socketPath: (flags.socket as string | undefined) ?? '/run/podscope/podscope.sock' });
  process.stderr.write(`serving CRI runtime.v1 on ${(flags.socket as string | undefined) ?? '/run/podscope/podscope.sock'}\n`);
  await waitForSignal();
  await server.close();
  await engine.close();
  return 0;
}
