/**
 * `npm run bench`: N sequential and M concurrent sandboxes on the real host (own temp dirs, bridge psc-bench,
 * 10.235.0.0/24 + fd00:235::/64), p50/p95 of run, status, stop and remove, the split per step, and the floor (the
 * same external commands back to back without the engine); with --side-by-side, the same lifecycle over CRI
 * against `podscope cri` and a containerd started for the run. Needs root. Prints figures; asserts nothing.
 * Lives outside the product: it uses the test kit (throwaway env, containerd fixture).
 */
import { parseArgs } from 'node:util';

const HELP = `npm run bench -- [--sequential N] [--concurrent M] [--side-by-side]`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { sequential: { type: 'string', short: 'n' }, concurrent: { type: 'string', short: 'm' }, 'side-by-side': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const int = (k: 'sequential' | 'concurrent', d: number) => {
    const v = values[k] === undefined ? d : Number(values[k]);
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${k} must be a positive integer, not ${JSON.stringify(values[k])}`);
    return v;
  };
  const { runSandboxBench } = await import('./sandbox-bench');
  await runSandboxBench({ sequential: int('sequential', 20), concurrent: int('concurrent', 10) });
  if (values['side-by-side']) {
    const { runCriSideBySide } = await import('./cri-side-by-side');
    process.stdout.write('\n');
    await runCriSideBySide({ n: int('sequential', 20) });
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
