#!/usr/bin/env node
/**
 * `npm test`: every phase of the suite, in two stages of lanes side by side.
 *
 *   stage 1:  pool "cpu":    as many at once as there are cores: the static checks (typecheck of each tsconfig,
 *                            eslint, oxfmt), unit, the CRI files over fakes (project cri)
 *             lane "alone":  the real files that look at the whole host (vitest project real-alone)
 *   stage 2:  lane "real":   the real files (project real: the host, root, runc, the plugins)
 *             lane "e2e":    the renderer build, then Playwright on it
 *   Stage 2 starts when the files that run alone are done, while the rest of stage 1's pool goes on beside it.
 *
 * On 2-core machines the suite is bounded by its CPU seconds. Measured machine-wide (/proc/stat, each second of a
 * clean-clone run): both cores are busy from ~60 s on to the end, stage 2 included, with a third of that time in
 * the kernel (forks and execs, namespaces, netfilter). The phases' own CPU figures below count only the processes
 * each one waits for; what was reparented (conmon, the shims, containerd, the kernel's own work) shows only in the
 * machine's figure. The host-global clean-up the real and e2e runs would each do at their end is done once here,
 * around both (scripts/shared-host.ts). PODSCOPE_TEST_SERIAL=1 runs one phase at a time instead (each phase's time alone).
 *
 * Each phase's output is printed in one block when it ends (never interleaved), with its wall and CPU time; a
 * summary follows. The exit status is non-zero when any phase failed; a failing phase does not stop the others, so
 * one run reports every failure.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Node reads and parses the bundle NODE_EXTRA_CA_CERTS names at each start, before running a line: ~75 ms of CPU
// with Debian's bundle on this project's machines, over ~700 Node starts in one run (vitest and Playwright workers,
// CLI runs, bundled helpers). The suite opens no TLS connection (loopback, its own namespaces, a plain-HTTP registry
// on 127.0.0.1), so its processes start without it.
delete process.env.NODE_EXTRA_CA_CERTS;
const serial = process.env.PODSCOPE_TEST_SERIAL === '1';
const OUTER_ENV = 'PODSCOPE_HOST_SHARED_OUTER'; // testkit/host-cleanup.ts SHARED_HOST_OUTER_ENV
const snapshotFile = join(tmpdir(), `podscope-shared-host-${process.pid}.json`);
const results = [];
const t0 = Date.now();
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * CPU seconds of every finished descendant (user + system: cutime and cstime of /proc/self/stat, which count each child
 * once it is reaped, with the children it reaped in turn): the whole run's CPU, and a phase's when sh's `times` is
 * missing. On a machine with few cores the suite's wall time is bounded by its CPU time over the cores.
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

/** The machine's busy and idle seconds so far (the cpu line of /proc/stat: every process, the kernel's threads too). */
function machineSeconds() {
  try {
    const [user, nice, system, idle, iowait, irq, softirq] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { busy: (user + nice + system + irq + softirq) / 100, idle: (idle + iowait) / 100 };
  } catch {
    return { busy: Number.NaN, idle: Number.NaN };
  }
}
const machineAtStart = machineSeconds();

/** The children's user + system seconds from the second line of sh's `times` ("0m41.20s 0m3.05s"). */
function shellTimes(text) {
  const line = text.trim().split('\n')[1] ?? '';
  const secs = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return secs.length === 2 ? secs[0] + secs[1] : undefined;
}

const scripts = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts;
const bin = fileURLToPath(new URL('../node_modules/.bin', import.meta.url));
const quote = (arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`);
/**
 * A phase's shell command: a package.json script's command (`script`), or a tool with its arguments (`tool`). phase()
 * runs it with node_modules/.bin first on PATH, as npm would, but not through npm: each `npm run` or `npm exec`
 * started npm's own CLI first (~0.7 CPU s, 10 CPU s over one run's phases).
 */
const script = (name) => scripts[name];
const tool = (...argv) => argv.map(quote).join(' ');

/** Runs one phase with its output captured; resolves with its exit code. */
function phase(name, command, env = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const cpuBefore = childCpuSeconds();
    process.stdout.write(`▶ ${name} (${command}) started at +${secs(started - t0)}\n`);
    // through sh, whose `times` (on fd 3) gives this phase's own CPU seconds even while other phases run
    const child = spawn('sh', ['-c', `${command}; s=$?; times >&3; exit $s`], {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, FORCE_COLOR: process.env.FORCE_COLOR ?? '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const chunks = [];
    let times = '';
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    child.stdio[3].on('data', (d) => (times += d));
    child.on('close', (code, signal) => {
      const ms = Date.now() - started;
      const status = code ?? (signal ? 128 : 1);
      const output = Buffer.concat(chunks);
      results.push({ name, status, ms, cpu: shellTimes(times) ?? childCpuSeconds() - cpuBefore, output });
      process.stdout.write(`\n━━━━ ${name}: ${status === 0 ? 'passed' : `FAILED (exit ${code ?? signal})`} in ${secs(ms)} ━━━━\n`);
      process.stdout.write(output);
      process.stdout.write(`━━━━ end of ${name} ━━━━\n\n`);
      resolve(status);
    });
  });
}

/** A phase's output as plain lines (its colours removed). */
const plainLines = (text) => text.replace(/\x1b\[[0-9;]*m/g, '').split('\n');

/** The tests Playwright lists under its "N failed" (or "N flaky") summary line, up to the next count or a blank line. */
function playwrightListed(lines, what) {
  const picked = [];
  let inList = false;
  for (const line of lines) {
    if (new RegExp(`^\\s+\\d+ ${what}$`).test(line)) inList = true;
    else if (/^\s+\d+ (passed|failed|flaky|skipped|did not run)/.test(line) || line.trim() === '') inList = false;
    else if (inList) picked.push(line.trimEnd());
  }
  return picked;
}

/**
 * The lines of a failed phase's output that name what failed: vitest's `FAIL` and `×` lines, Playwright's `✘` lines,
 * each failure's heading and first error line and the tests under its "N failed" summary, tsc's and eslint's error
 * lines; at most 40.
 */
function failureLines(text) {
  const lines = plainLines(text);
  const picked = lines.filter(
    (line) =>
      /^\s*(FAIL|✘|×)\s/.test(line) ||
      /^\s+\d+\) \[/.test(line) ||
      (/^\s+\w*Error\b.*:/.test(line) && !/Error Context:/.test(line)) ||
      /error TS\d+:/.test(line) ||
      /^\s+\d+:\d+\s+error\s/.test(line) ||
      /Test timeout of|Tests? +\d+ failed/.test(line),
  );
  return [...new Set([...picked.map((l) => l.trimEnd()), ...playwrightListed(lines, 'failed')])].slice(0, 40);
}

async function lane(steps) {
  let failed = false;
  for (const [name, command, env] of steps) if ((await phase(name, command, env)) !== 0) failed = true;
  return failed;
}

/**
 * The static checks: each command of `npm run typecheck` (one tsc per layer's tsconfig) and of `npm run lint`
 * (eslint, with a young generation of 64 MiB: a quarter less CPU, its garbage collector was 16% of it; and with V8's
 * helper threads off, --single-threaded: 66.7 → 60.3 CPU s in the same wall time; oxfmt);
 * here they run as a pool, as many at a time as there are cores. They are read from package.json,
 * so the two never drift apart. The tsconfig that covers the most (the last of typecheck: tests, test kit and tools,
 * with what they import) and the linters start first.
 */
const cores = availableParallelism();
const commands = (script) => script.split('&&').map((c) => c.trim());
const typecheck = commands(scripts.typecheck);
const staticChecks = [typecheck.at(-1), ...commands(scripts.lint), ...typecheck.slice(0, -1).reverse()].map((c) => [
  c
    .replace(/^node .*\beslint\.js.*$/, 'eslint')
    .replace(/ --.*$/, '')
    .replace(/^.*\btsc -p /, 'tsc '),
  // tsc 7 checks with four threads by default; here the pool already keeps every core busy, and one thread checks
  // the tools project in 13.8 CPU s instead of 20.6 (the threads' duplicated work and their coordination)
  tool(...c.split(/\s+/), ...(/\btsc -p /.test(c) ? ['--singleThreaded'] : [])),
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

const vitest = (...projects) => tool('vitest', 'run', ...projects.flatMap((p) => ['--project', p]));
// Stage 1's cpu pool: the static checks, then unit as soon as a slot is free (it used to wait for eslint, the longest
// check, while the other core had only the files that run alone, which mostly wait), and the CRI files over fakes (no
// host, no root): in stage 2's real run they cost more than here (the real run's workers each import them anew, and
// stage 2 has no CPU to spare)
const cpu = [...staticChecks, ['unit', script('test:unit')], ['CRI over fakes', vitest('cri')]];
// The runs that touch the host are told that the host-global clean-up is done here, once, around all of them.
const outer = { [OUTER_ENV]: '1' };
const alone = [['real (alone)', vitest('real-alone'), outer]];
const real = [['real', vitest('real'), outer]];
// the renderer built first (4 CPU s; Playwright is not the longest lane), so Playwright's global setup skips its own build
const e2e = [
  ['renderer build', script('build:renderer')],
  ['e2e', script('test:e2e:run'), { PODSCOPE_E2E_SKIP_BUILD: '1', ...outer }],
];
const sharedHost = (verb) => [`host ${verb}`, tool('tsx', 'scripts/shared-host.ts', verb, snapshotFile)];

await phase(...sharedHost('begin'));
if (serial) {
  await pool(cpu, 1);
  await lane([...alone, ...real, ...e2e]);
} else {
  // stage 1: the CPU-bound checks, and beside them the files that need the host alone (they mostly wait on
  // containerd and the kernel; the static checks and unit touch nothing on the host). Stage 2, the real files beside
  // Playwright (each with leases of its own from the one allocator), starts as soon as the host is no longer needed
  // alone, not when the pool's last check ends: the real files are the longest lane of all
  const aloneDone = lane(alone);
  await Promise.all([pool(cpu, cores), aloneDone.then(() => lane(real)), aloneDone.then(() => lane(e2e))]);
}
await phase(...sharedHost('end'));

const failed = results.filter((r) => r.status !== 0);
const machine = machineSeconds();
process.stdout.write(
  `npm test: ${secs(Date.now() - t0)} in all, ${(childCpuSeconds() - cpuAtStart).toFixed(0)} CPU s on ${cores} cores` +
    ` (the machine: ${(machine.busy - machineAtStart.busy).toFixed(0)} s busy, ${(machine.idle - machineAtStart.idle).toFixed(0)} s idle)\n`,
);
for (const r of results)
  process.stdout.write(
    `  ${r.status === 0 ? 'ok    ' : 'FAILED'} ${r.name.padEnd(15)} ${secs(r.ms).padStart(8)}  ~${r.cpu.toFixed(0)} CPU s\n`,
  );
// A log's reader (CI keeps only its tail) sees which tests failed without scrolling back through the phase's block
for (const r of failed) {
  const lines = failureLines(r.output.toString('utf8'));
  if (lines.length > 0) process.stdout.write(`\n${r.name} failed:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}
// and the tests that failed once and passed when Playwright ran them again (see e2e/playwright.config.ts), by name
for (const r of results) {
  const flaky = playwrightListed(plainLines(r.output.toString('utf8')), 'flaky');
  if (flaky.length > 0) process.stdout.write(`\n${r.name}: flaky (failed, then passed on retry):\n${flaky.join('\n')}\n`);
}
process.exitCode = failed.length > 0 ? 1 : 0;
