import { PodscopeError } from '../../../shared/domain/errors';
import { parseCommandArgs } from '../args';
import { rawTerminal, terminalResizes, withStreaming } from '../streaming';

export const help = `podscope attach [-i] [-t] [flags] ID
  Attaches to a running container's own stdio (a container created with stdin/tty), as crictl attach.
  --stdin, -i   send this process's stdin to the container
  --tty, -t     the container has a terminal: raw mode here, size changes forwarded
  Detach by ending stdin (^D without a terminal) or ^C here.`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { stdin: { type: 'boolean', short: 'i' }, tty: { type: 'boolean', short: 't' } });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'attach takes one container ID');
  const tty = Boolean(flags.tty);
  const interactive = Boolean(flags.stdin);
  return withStreaming(flags, async (streaming) => {
    const restore = tty && interactive ? rawTerminal() : () => undefined;
    const detach = new AbortController();
    // without a terminal ^C detaches (with one, it is a key the container receives)
    const onSigint = () => detach.abort();
    process.once('SIGINT', onSigint);
    try {
      await streaming.attach({
        containerId: positionals[0]!,
        tty,
        stdin: interactive ? process.stdin : null,
        stdout: process.stdout,
        stderr: tty ? null : process.stderr,
        ...(tty && { resize: terminalResizes() }),
        signal: detach.signal,
      });
      return 0;
    } finally {
      process.off('SIGINT', onSigint);
      restore();
      if (interactive) process.stdin.pause();
    }
  });
}
