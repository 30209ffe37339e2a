/**
 * How long one CLI verb costs: `pods` on an empty state dir, run as a user runs it, beside the floor (`node -e 0`)
 * and crictl when it is installed. Each command runs --runs times (default 15) after one unmeasured warm-up run (which
 * also makes the checkout's CLI build and its code cache if they are stale), in rounds of every command once; prints
 * wall min/median/max and the median CPU (user+sys, from /usr/bin/time when present), and each median over
 * `node -e 0`'s: on a shared, loaded machine the ratio holds where the absolute times drift. The issue's target is the README's command at ≤ 150 ms on a quiet machine, where
 * `node -e 0` takes about 50 ms (so about 3× it). Figures only, nothing asserted.
 *
 *   npx tsx bench/cli-startup.ts [--runs N]
 *
 * Rows: the README's command (`podscope` on PATH, see scripts/setup.sh), the same file by path, `npx podscope`,
 * the TypeScript through tsx (PODSCOPE_CLI=source), the production bundle (dist/cli, PODSCOPE_CLI=bundle, when
 * `npm run build:electron` has made it), `node -e 0`, crictl. Holds nothing on the host: the engine it opens is
 * read-only on a temp state and run dir.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fmt, percentile, row } from './stats';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);

function onPath(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** one run: wall ms, CPU ms (user+sys of the whole tree, NaN without /usr/bin/time), and whether it succeeded */
function once(argv: string[], env: NodeJS.ProcessEnv): { wall: number; cpu: number; ok: boolean; err: string } {
  const cmd = timeBin ? [timeBin, '-f', '@@%U %S', ...argv] : argv;
  const start = performance.now();
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd: ROOT, env, encoding: 'utf8' });
  const wall = performance.now() - start;
  const m = /@@([\d.]+) ([\d.]+)\s*$/.exec(r.stderr ?? '');
  return {
    wall,
    cpu: m ? (Number(m[1]) + Number(m[2])) * 1000 : Number.NaN,
    ok: r.status === 0,
    err: (r.stderr ?? '').replace(/@@.*$/, '').trim(),
  };
}

const dir = await mkdtemp(join(tmpdir(), 'podscope-cli-bench-'));
const engine = ['--state-dir', join(dir, 'state'), '--run-dir', join(dir, 'run')];
const base = { ...process.env, PODSCOPE_CLI: '' };
const installed = onPath('podscope');
const crictl = onPath('crictl');
const cases: { name: string; argv?: string[]; env?: NodeJS.ProcessEnv; note?: string }[] = [
  installed
    ? { name: 'podscope pods (README)', argv: ['podscope', 'pods', ...engine] }
    : { name: 'podscope pods (README)', note: 'no podscope on PATH: run ./scripts/setup.sh' },
  { name: './bin/podscope.mjs pods', argv: ['./bin/podscope.mjs', 'pods', ...engine] },
  { name: 'npx podscope pods', argv: ['npx', 'podscope', 'pods', ...engine] },
  { name: 'tsx (PODSCOPE_CLI=source)', argv: ['node', 'bin/podscope.mjs', 'pods', ...engine], env: { ...base, PODSCOPE_CLI: 'source' } },
  existsSync(join(ROOT, 'dist/cli/podscope.cjs'))
    ? {
        name: 'dist/cli (PODSCOPE_CLI=bundle)',
        argv: ['node', 'bin/podscope.mjs', 'pods', ...engine],
        env: { ...base, PODSCOPE_CLI: 'bundle' },
      }
    : { name: 'dist/cli (PODSCOPE_CLI=bundle)', note: 'not built: npm run build:electron' },
  { name: 'node -e 0', argv: ['node', '-e', '0'] },
  crictl
    ? { name: 'crictl --version', argv: ['crictl', '--version'] }
    : { name: 'crictl', note: 'not installed here (no Debian 12 package; its release binary is off the npm registry)' },
];

try {
  const widths = [32, 8, 8, 8, 8, 10];
  console.log(`CLI start-up, ${runs} runs each (ms); load average ${(await import('node:os')).loadavg()[0]!.toFixed(2)} at start`);
  const runnable: Array<{ name: string; argv: string[]; env: NodeJS.ProcessEnv; wall: number[]; cpu: number[] }> = [];
  const notes: Array<[string, string]> = [];
  for (const c of cases) {
    if (!c.argv) {
      notes.push([c.name, c.note ?? '']);
      continue;
    }
    // the warm-up run (which also makes the checkout's build and its code cache when they are stale)
    const warm = once(c.argv, c.env ?? base);
    if (!warm.ok) notes.push([c.name, `failed: ${warm.err.split('\n')[0]}`]);
    else runnable.push({ name: c.name, argv: c.argv, env: c.env ?? base, wall: [], cpu: [] });
  }
  // round after round, every command once in each: a load that comes and goes falls on every row alike, the floor's too
  for (let i = 0; i < runs; i++)
    for (const c of runnable) {
      const r = once(c.argv, c.env);
      c.wall.push(r.wall);
      c.cpu.push(r.cpu);
    }
  const floor = percentile(runnable.find((c) => c.name === 'node -e 0')!.wall, 50);
  console.log(row(['command', 'min', 'median', 'max', 'cpu', '× node -e 0'], widths));
  for (const c of runnable) {
    const median = percentile(c.wall, 50);
    console.log(
      row(
        [
          c.name,
          fmt(Math.min(...c.wall)),
          fmt(median),
          fmt(Math.max(...c.wall)),
          fmt(percentile(c.cpu, 50)),
          `${(median / floor).toFixed(2)}×`,
        ],
        widths,
      ),
    );
  }
  for (const [name, note] of notes) console.log(`${name.padEnd(widths[0]!)}  ${note}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
