import { PodscopeError } from '../../../shared/domain/errors';
import { engineOptionsFromFlags, parseCommandArgs } from '../args';

export const help = `podscope serve [flags]
  Browser mode: hosts an engine and serves the Podscope UI on 127.0.0.1 with a per-run token.
  Prints the URL (with its token) on stdout, then runs until interrupted; sandboxes keep running after it.
  --port N   (default: a free port)`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, { port: { type: 'string' } });
  const port = flags.port === undefined ? undefined : Number(flags.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535))
    throw new PodscopeError('InvalidArgument', `--port must be 0-65535, not ${JSON.stringify(flags.port)}`);
  const { startBrowserMode, untilSignal } = await import('../../host/serve');
  const mode = await startBrowserMode({ engineOptions: engineOptionsFromFlags(flags), port });
  if (mode.engineError) process.stderr.write(`podscope serve: the engine could not start (the UI explains it): ${mode.engineError}\n`);
  process.stdout.write(`${mode.url}\n`);
  process.stderr.write(
    'podscope: browser mode is running: open the URL above in Chromium (its token is required; keep it private). Ctrl-C stops it; sandboxes keep running.\n',
  );
  await untilSignal();
  await mode.close();
  return 0;
}
