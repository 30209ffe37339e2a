import { formatLogEntry, parseSince } from '../../../shared/domain/cri-log';
import { PodscopeError } from '../../../shared/domain/errors';
import { openContainerLog } from '../../engine/api';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope logs [flags] ID
  Prints a container's log (the CRI log file on this host), stdout lines to stdout and stderr lines to stderr.
  Lines the runtime cut into partial records are printed whole.
  --follow, -f       keep printing until the container exits (across log rotation)
  --since T          only lines since T: an RFC3339 time (2026-01-02T13:23:37Z) or a duration back from now (42m, 1h30m)
  --tail N           only the last N lines
  --timestamps, -t   show each line's time
  --stream S         stdout or stderr only`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, {
    follow: { type: 'boolean', short: 'f' },
    since: { type: 'string' },
    tail: { type: 'string' },
    timestamps: { type: 'boolean', short: 't' },
    stream: { type: 'string' },
  });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'logs takes exactly one container id');
  const tail = flags.tail === undefined ? undefined : Number(flags.tail);
  // crictl's --tail -1 means all
  if (tail !== undefined && (!Number.isInteger(tail) || tail < -1))
    throw new PodscopeError('InvalidArgument', '--tail must be a non-negative integer');
  const sinceNs = typeof flags.since === 'string' ? parseSince(flags.since, Date.now()) : undefined;
  if (typeof flags.since === 'string' && sinceNs === undefined)
    throw new PodscopeError(
      'InvalidArgument',
      `--since ${JSON.stringify(flags.since)} is neither an RFC3339 time nor a duration (e.g. 5m)`,
    );
  const stream = flags.stream;
  if (stream !== undefined && stream !== 'stdout' && stream !== 'stderr')
    throw new PodscopeError('InvalidArgument', '--stream must be stdout or stderr');
  const timestamps = flags.timestamps === true;
  await withApi(flags, async (api) => {
    const st = await api.containerStatus(positionals[0]!);
    if (!st.logPath)
      throw new PodscopeError(
        'FailedPrecondition',
        `container ${st.id} has no log file (its pod has no log_directory or its config no log_path)`,
      );
    // the file is on this host whichever runtime wrote it; "still running?" is the runtime's answer
    const isRunning = async () => (await api.containerStatus(st.id).catch(() => undefined))?.state === 'CONTAINER_RUNNING';
    const lines = await openContainerLog(
      st.logPath,
      {
        follow: flags.follow === true,
        sinceNs,
        tail: tail === -1 ? undefined : tail,
        stream: stream as 'stdout' | 'stderr' | undefined,
        pollMs: 200,
      },
      isRunning,
    );
    for await (const e of lines) {
      const out = e.stream === 'stdout' ? process.stdout : process.stderr;
      if (!out.write(formatLogEntry(e, timestamps))) await new Promise((r) => out.once('drain', r));
    }
  });
  return 0;
}
