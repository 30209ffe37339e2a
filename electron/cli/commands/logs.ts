import { open } from 'node:fs/promises';
import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope logs [flags] ID
  Prints a container's log (the CRI log file on this host), stdout lines to stdout and stderr lines to stderr.
  --follow, -f   keep printing until the container exits
  --tail N       only the last N lines
  --timestamps, -t   show each line's time`;

const LINE = /^(\S+) (stdout|stderr) ([FP]) (.*)$/;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, {
    follow: { type: 'boolean', short: 'f' },
    tail: { type: 'string' },
    timestamps: { type: 'boolean', short: 't' },
  });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'logs takes exactly one container id');
  const tail = flags.tail === undefined ? undefined : Number(flags.tail);
  if (tail !== undefined && (!Number.isInteger(tail) || tail < 0))
    throw new PodscopeError('InvalidArgument', '--tail must be a non-negative integer');
  await withApi(flags, async (api) => {
    const st = await api.containerStatus(positionals[0]!);
    if (!st.logPath)
      throw new PodscopeError(
        'FailedPrecondition',
        `container ${st.id} has no log file (its pod has no log_directory or its config no log_path)`,
      );
    const fh = await open(st.logPath, 'r').catch((e: NodeJS.ErrnoException) => {
      throw new PodscopeError('NotFound', `cannot open ${st.logPath}: ${e.code ?? e.message}`);
    });
    let offset = 0;
    let rest = '';
    const partial: Record<string, string> = { stdout: '', stderr: '' };
    const emit = (lines: string[]) => {
      for (const raw of lines) {
        const m = LINE.exec(raw);
        if (!m) continue;
        const [, time, stream, tag, text] = m as unknown as [string, string, 'stdout' | 'stderr', string, string];
        if (tag === 'P') {
          partial[stream] += text;
          continue;
        }
        const out = `${flags.timestamps ? `${time} ` : ''}${partial[stream]}${text}\n`;
        partial[stream] = '';
        (stream === 'stdout' ? process.stdout : process.stderr).write(out);
      }
    };
    const readMore = async (): Promise<string[]> => {
      const { size } = await fh.stat();
      if (size < offset) offset = 0; // rotated and reopened
      if (size === offset) return [];
      const buf = Buffer.alloc(size - offset);
      await fh.read(buf, 0, buf.length, offset);
      offset = size;
      const lines = (rest + buf.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      return lines;
    };
    try {
      const first = await readMore();
      emit(tail === undefined ? first : first.slice(Math.max(0, first.length - tail)));
      while (flags.follow) {
        await new Promise((r) => setTimeout(r, 200));
        emit(await readMore());
        const now = await api.containerStatus(st.id).catch(() => undefined);
        if (!now || now.state !== 'CONTAINER_RUNNING') {
          emit(await readMore());
          break;
        }
      }
    } finally {
      await fh.close();
    }
  });
  return 0;
}
