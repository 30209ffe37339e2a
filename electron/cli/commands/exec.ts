import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { ENGINE_FLAGS, parseCommandArgs } from '../args';
import { rawTerminal, terminalResizes, withStreaming } from '../streaming';

export const help = `podscope exec [-i] [-t] [-s] [flags] ID COMMAND [ARG...]
  Runs a command in a running container and exits with its exit code.
  Streams it (Exec RPC and its streaming URL, or the engine's exec) unless -s.
  --interactive, -i  send this process's stdin to the command
  --tty, -t          allocate a terminal: raw mode here, size changes forwarded (stderr comes on stdout)
  --sync, -s         run it with ExecSync and print the output when it ends
  --timeout N        with -s: seconds before the command is killed (default 0: none)
  Flags (engine flags too) go before ID: everything after ID is the command.`;

export async function run(argv: string[]): Promise<number> {
  // everything after the container id belongs to the command, flags included
  const valueFlags = new Set([
    '--timeout',
    ...Object.entries(ENGINE_FLAGS)
      .filter(([, o]) => o.type === 'string')
      .map(([k]) => `--${k}`),
  ]);
  const split = argv.findIndex((a, i) => !a.startsWith('-') && !(i > 0 && valueFlags.has(argv[i - 1]!)));
  const own = split < 0 ? argv : argv.slice(0, split + 1);
  const cmd = split < 0 ? [] : argv.slice(split + 1);
  const { flags, positionals } = parseCommandArgs(own, {
    sync: { type: 'boolean', short: 's' },
    timeout: { type: 'string' },
    interactive: { type: 'boolean', short: 'i' },
    tty: { type: 'boolean', short: 't' },
  });
  if (positionals.length !== 1 || cmd.length === 0) throw new PodscopeError('InvalidArgument', 'exec takes ID COMMAND [ARG...]');
  const id = positionals[0]!;
  if (flags.sync) {
    const timeout = Number((flags.timeout as string | undefined) ?? '0');
    if (!Number.isInteger(timeout) || timeout < 0) throw new PodscopeError('InvalidArgument', '--timeout must be a non-negative integer');
    const r = await withApi(flags, (api) => api.execSync(id, cmd, timeout));
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    return r.exitCode;
  }
  if (flags.timeout !== undefined) throw new PodscopeError('InvalidArgument', '--timeout applies to exec -s only');
  const tty = Boolean(flags.tty);
  const interactive = Boolean(flags.interactive);
  return withStreaming(flags, async (streaming) => {
    const restore = tty && interactive ? rawTerminal() : () => undefined;
    try {
      const r = await streaming.exec({
        containerId: id,
        cmd,
        tty,
        stdin: interactive ? process.stdin : null,
        stdout: process.stdout,
        // with a terminal, the process's stderr is the terminal too (CRI has no separate stream then)
        stderr: tty ? null : process.stderr,
        ...(tty && { resize: terminalResizes() }),
      });
      return r.exitCode;
    } finally {
      restore();
      // stdin was read for the session; let the process exit instead of waiting for more input
      if (interactive) process.stdin.pause();
    }
  });
}
