#!/usr/bin/env node
/**
 * `npm test`: every phase of the suite, one after the other (PODSCOPE_TEST_LANES=1: the two lanes side by side). The real project (netns, CNI, runc) spends
 * most of its time waiting on the kernel and the plugins, so the CPU-bound phases (typecheck, lint, unit, the renderer
 * build) run meanwhile; Playwright, which drives the real engine too, starts once the real project is done.
 *
 *   first:        the static checks (typecheck of each tsconfig, eslint, prettier), as many at once as there are cores
 *   lane "host":  npm run test:real
 *   lane "cpu":   npm run test:unit → npm run build:renderer
 *   then:         playwright (the renderer built above, not again)
 *
 * Each phase's output is printed in one block when it ends (never interleaved), with its time; a summary follows.
 * The exit status is non-zero when any phase failed; a failing phase does not stop the others in its group, so one
 * run reports every failure.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// On this project's 2-core machines the lanes compete and gain nothing: on fresh clones of one tree the suite took
// 933 s with the lanes side by side (typecheck, lint and unit 613 s there, 383 s alone) and 937 s one after the other.
// So the phases run one after the other by default, each whole phase's output together and a failing phase easier to
// read; the real files still run in parallel inside their phase. PODSCOPE_TEST_LANES=1 runs the two lanes side by side.
const serial = process.env.PODSCOPE_TEST_LANES !== '1';
const results = [];
const t0 = Date.now();
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * CPU seconds of every finished descendant (user + system: cutime and cstime of /proc/self/stat, which count each child
 * once it is reaped, with the children it reaped in turn). On a machine with few cores the suite's wall time is bounded
 * by its CPU time over the cores, so the summary prints both; a phase's figure is exact when it ran alone.
 */
function childCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (field 3 of proc(5)); cutime and cstime are fields 16 and 17, in clock ticks (100 Hz on Linux)
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}
const cpuAtStart = childCpuSeconds();

/** Runs one phase with its output captured; resolves with its exit code. */
function phase(name, args, env = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const cpuBefore = childCpuSeconds();
    process.stdout.write(`▶ ${name} (${args.join(' ')}) started at +${secs(started - t0)}\n`);
    const child = spawn(npm, args, {
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    child.on('close', (code, signal) => {
      const ms = Date.now() - started;
      const status = code ?? (signal ? 128 : 1);
      results.push({ name, status, ms, cpu: childCpuSeconds() - cpuBefore });
      process.stdout.write(`\n━━━━ ${name}: ${status === 0 ? 'passed' : `FAILED (exit ${code ?? signal})`} in ${secs(ms)} ━━━━\n`);
      process.stdout.write(Buffer.concat(chunks));
      process.stdout.write(`━━━━ end of ${name} ━━━━\n\n`);
      resolve(status);
    });
  });
}

async function lane(steps) {
  let failed = false;
  for (const [name, args, env] of steps) if ((await phase(name, args, env)) !== 0) failed = true;
  return failed;
}

/**
 * The static checks: each command of `npm run typecheck` (one tsc per layer's tsconfig) and of `npm run lint`
 * (eslint, prettier); here they run as a pool, as many at a time as there are cores. They are read from package.json,
 * so the two never drift apart. The tsconfig that covers the most (the last of typecheck: tests, test kit and tools,
 * with what they import) and the linters start first.
 */
const cores = availableParallelism();
const scripts = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts;
const commands = (script) => script.split('&&').map((c) => c.trim());
const typecheck = commands(scripts.typecheck);
const staticChecks = [typecheck.at(-1), ...commands(scripts.lint), ...typecheck.slice(0, -1).reverse()].map((c) => [
  c.replace(/ --.*$/, '').replace(/^.*\btsc -p /, 'tsc '),
  ['exec', '--', ...c.split(/\s+/)],
]);

async function pool(steps, width) {
  const queue = [...steps];
  let failed = false;
  const worker = async () => {
    for (let step = queue.shift(); step; step = queue.shift()) if ((await phase(...step)) !== 0) failed = true;
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, queue.length)) }, worker));
  return failed;
}

const cpu = [
  ['unit', ['run', 'test:unit']],
  ['renderer build', ['run', 'build:renderer']],
];
const host = [['real', ['run', 'test:real']]];
// the renderer was built in the cpu lane: Playwright's global setup skips its own build
const e2e = [['e2e', ['run', 'test:e2e:run'], { PODSCOPE_E2E_SKIP_BUILD: '1' }]];

await pool(staticChecks, cores);
if (serial) {
  await lane([...cpu, ...host, ...e2e]);
} else {
  await Promise.all([lane(host), lane(cpu)]);
  await lane(e2e);
}

const failed = results.filter((r) => r.status !== 0);
process.stdout.write(`npm test: ${secs(Date.now() - t0)} in all, ${(childCpuSeconds() - cpuAtStart).toFixed(0)} CPU s on ${cores} cores\n`);
for (const r of results)
  process.stdout.write(
    `  ${r.status === 0 ? 'ok    ' : 'FAILED'} ${r.name.padEnd(15)} ${secs(r.ms).padStart(8)}  ~${r.cpu.toFixed(0)} CPU s\n`,
  );
process.exitCode = failed.length > 0 ? 1 : 0;
