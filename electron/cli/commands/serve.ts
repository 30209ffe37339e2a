import { engineOptionsFromFlags } from '../args';
import { parseCommandArgs } from '../args';

export const help = `podscope serve [flags]
  Browser mode: hosts an engine and serves the Podscope UI on 127.0.0.1 with a per-run token.
  Prints the URL (with its token) on stdout, then runs until interrupted.
  --port N   (default: a free port)`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, { port: { type: 'string' } });
  const { createEngine } = await import('../../engine/index');
  const { startBrowserHost } = await import('../../host/index');
  const engine = await createEngine(engineOptionsFromFlags(flags));
  const host = await startBrowserHost({ engine, port: flags.port ? Number(flags.port) : undefined });
  process.stdout.write(`${host.url}\n`);
  await waitForSignal();
  await host.close();
  await engine.close();
  return 0;
}

export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
