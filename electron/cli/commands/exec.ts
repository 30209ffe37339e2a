import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { ENGINE_FLAGS, parseCommandArgs } from '../args';

export const help = `podscope exec -s [flags] ID COMMAND [ARG...]
  Runs a command in a running container (ExecSync) and exits with its exit code.
  --sync, -s        required: streaming exec (Exec) is not served yet
  --timeout N       seconds before the command is killed (default 0: none)
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
  const { flags, positionals } = parseCommandArgs(own, { sync: { type: 'boolean', short: 's' }, timeout: { type: 'string' } });
  if (!flags.sync)
    throw new PodscopeError(
      'Unimplemented',
      'exec without -s needs the streaming Exec RPC, which Podscope does not serve yet; use exec -s',
    );
  if (positionals.length !== 1 || cmd.length === 0) throw new PodscopeError('InvalidArgument', 'exec -s takes ID COMMAND [ARG...]');
  const timeout = Number((flags.timeout as string | undefined) ?? '0');
  if (!Number.isInteger(timeout) || timeout < 0) throw new PodscopeError('InvalidArgument', '--timeout must be a non-negative integer');
  const r = await withApi(flags, (api) => api.execSync(positionals[0]!, cmd, timeout));
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  return r.exitCode;
}
