import { PodscopeError } from '../../../shared/domain/errors';
import { parseCommandArgs } from '../args';

export const help = `podscope bench [--sequential N] [--concurrent M] [--side-by-side]
  Runs N sequential and M concurrent sandboxes (own temp dirs, bridge psc-bench, 10.235.0.0/24 + fd00:235::/64)
  and prints p50/p95 of run, status, stop and remove, the split per step, and the floor (the same external
  commands back to back without the engine). Needs root. Prints figures; asserts nothing.
  --side-by-side   then the same lifecycle over CRI against \`podscope cri\` and a containerd started for the run
                   (N lifecycles each), with p50/p95 per op and the ratio Podscope/containerd`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, { sequential: { type: 'string', short: 'n' }, concurrent: { type: 'string', short: 'm' }, 'side-by-side': { type: 'boolean' } });
  const int = (k: string, d: number) => {
    const v = flags[k] === undefined ? d : Number(flags[k]);
    if (!Number.isInteger(v) || v < 1) throw new PodscopeError('InvalidArgument', `--${k} must be a positive integer`);
    return v;
  };
  const { runSandboxBench } = await import('../../bench/sandbox-bench');
  await runSandboxBench({ sequential: int('sequential', 20), concurrent: int('concurrent', 10) });
  if (flags['side-by-side']) {
    const { runCriSideBySide } = await import('../../bench/cri-side-by-side');
    process.stdout.write('\n');
    await runCriSideBySide({ n: int('sequential', 20) });
  }
  return 0;
}
