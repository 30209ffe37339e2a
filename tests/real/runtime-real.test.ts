/**
 * Real netns + pause container round trip (root only). Everything lives under one temporary directory, one runc root
 * and one cgroup parent created here, and is removed in afterAll even when a test fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PodSandboxConfigSchema, type PodSandboxConfigInput } from '../../shared/domain/config';
import { NodeProcessRunner, runChecked } from '../../electron/engine/os/exec';
import { LinuxNetnsManager } from '../../electron/engine/netns/linux-netns';
import { readMountInfo } from '../../electron/engine/netns/mountinfo';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import { readEngineOomScoreAdj } from '../../electron/engine/runtime/oom-score';
import { ensurePauseRootfs } from '../../electron/engine/runtime/pause-rootfs';
import { conmonRuntimeAt } from '../../electron/engine/runtime/handler-runtimes';
import { OciPauseRuntime } from '../../electron/engine/runtime/pause-runtime';
import {
  mountShm,
  removeSandboxFiles,
  sandboxPaths,
  writeSandboxFiles,
  type SandboxPaths,
} from '../../electron/engine/runtime/sandbox-files';
import type { PauseLocation, RuntimeStepReporter } from '../../electron/engine/runtime/types';

const isRoot = process.getuid?.() === 0;
const runner = new NodeProcessRunner();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

let base: string;
let netns: LinuxNetnsManager;
let runtime: OciPauseRuntime;
let runcRoot: string;
/** the default handler's pause location: runc under <runDir>/runc */
let at: PauseLocation;
const list = async () => (await runtime.listContainers()).map((c) => c.id);
const cgroupParent = `/podscope-rt-test-${randomBytes(4).toString('hex')}`;
const foreground: ChildProcess[] = [];

const newId = () => randomBytes(32).toString('hex');
const podConfig = (c: Omit<PodSandboxConfigInput, 'metadata'> = {}) =>
  PodSandboxConfigSchema.parse({
    metadata: { name: 'rt', namespace: 'test', uid: 'u1' },
    ...c,
    linux: { cgroup_parent: cgroupParent, ...c.linux },
  });

async function runc(args: string[]) {
  return runChecked(runner, { file: 'runc', args: ['--root', runcRoot, ...args], timeoutMs: 20_000 });
}

/** [pid, state, cmdline] of every process whose parent is `ppid`. */
async function childrenOf(ppid: number): Promise<{ pid: number; state: string; cmdline: string }[]> {
  const out: { pid: number; state: string; cmdline: string }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const statLine = await readFile(`/proc/${name}/stat`, 'utf8');
      const [state, parent] = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
      if (Number(parent) !== ppid) continue;
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0').filter(Boolean).join(' ');
      out.push({ pid: Number(name), state: state ?? '?', cmdline });
    } catch {
      // the process exited while we looked
    }
  }
  return out;
}

/** conmon processes whose command line names the container id */
function conmonsOf(id: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
        // a zombie (exited, not yet reaped) has an empty command line: it runs nothing
        return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'conmon' && argv.includes(id);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A zombie is not running: runc already reports "stopped" while the host's init has yet to reap it. */
async function isRunning(pid: number): Promise<boolean> {
  const statLine = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return statLine !== undefined && statLine.slice(statLine.lastIndexOf(')') + 2, statLine.lastIndexOf(')') + 3) !== 'Z';
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function mountsUnder(dir: string): Promise<string[]> {
  const real = await realpath(dir);
  return (await readMountInfo()).map((m) => m.mountPoint).filter((p) => p === real || p.startsWith(`${real}/`));
}

/** Everything a pause container needs, in the order the sandbox service uses it. */
async function preparePod(
  id: string,
  config: ReturnType<typeof podConfig>,
  netnsPath?: string,
): Promise<{ paths: SandboxPaths; spec: ReturnType<typeof buildPauseSpec> }> {
  const paths = sandboxPaths(join(base, 'state'), join(base, 'run'), id);
  await writeSandboxFiles(paths, config);
  await mountShm(runner, paths.shm);
  const spec = buildPauseSpec({
    id,
    config,
    netnsPath,
    rootfsPath: await runtime.ensureRootfs(),
    resolvConfPath: paths.resolvConf,
    shmPath: paths.shm,
    engineOomScoreAdj: await readEngineOomScoreAdj(),
  });
  return { paths, spec };
}

describe.skipIf(!isRoot)('real netns + runc pause runtime', () => {
  beforeAll(async () => {
    base = await mkdtemp('/tmp/podscope-runtime-real-');
    runcRoot = join(base, 'run', 'runc');
    netns = new LinuxNetnsManager(join(base, 'netns'), runner);
    runtime = new OciPauseRuntime({
      runDir: join(base, 'run'),
      runtimeAt: conmonRuntimeAt({ runcPath: 'runc' }, runner),
      rootfsDir: join(base, 'state', 'pause', 'rootfs'),
    });
    at = runtime.locate('');
  });

  afterAll(async () => {
    for (const child of foreground) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
    if (!base) return;
    for (const c of await runtime.listContainers().catch(() => [])) await runtime.delete(c.id, c.at).catch(() => undefined);
    for (const path of await netns.list().catch(() => [])) await netns.remove(path).catch(() => undefined);
    // deepest first: netns files and shm mounts, then the netns dir's own bind mount
    for (const m of (await mountsUnder(base)).reverse()) await runner.run({ file: 'umount', args: ['-l', m], timeoutMs: 10_000 });
    for (const controller of await readdir('/sys/fs/cgroup').catch(() => [])) {
      await rmdir(join('/sys/fs/cgroup', controller, cgroupParent)).catch(() => undefined);
    }
    await rm(base, { recursive: true, force: true });
  });

  describe('network namespaces', () => {
    it('create pins a distinct net namespace on <dir>/cni-<uuid>; remove unpins and deletes it, twice', async () => {
      const path = await netns.create();
      expect(path).toMatch(/\/netns\/cni-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(await netns.list()).toEqual([path]);
      expect(await netns.isClosed(path)).toBe(false);

      const [own, host] = await Promise.all([stat(path), stat('/proc/self/ns/net')]);
      expect(own.dev).toBe(host.dev); // both on nsfs
      expect(own.ino).not.toBe(host.ino); // but a different namespace
      const inside = await runChecked(runner, {
        file: 'nsenter',
        args: [`--net=${path}`, 'readlink', '/proc/self/ns/net'],
        timeoutMs: 5000,
      });
      expect(inside.stdout.trim()).toBe(`net:[${own.ino}]`);
      const links = await runChecked(runner, { file: 'nsenter', args: [`--net=${path}`, 'ip', '-o', 'link'], timeoutMs: 5000 });
      expect(
        links.stdout
          .trim()
          .split('\n')
          .map((l) => l.split(': ')[1]),
      ).toEqual(['lo']);

      await netns.remove(path);
      await netns.remove(path);
      expect(await netns.isClosed(path)).toBe(true);
      expect(await netns.list()).toEqual([]);
      expect((await readMountInfo()).some((m) => m.mountPoint.endsWith(path.split('/').pop()!))).toBe(false);
    });

    it('makes its directory a shared mount point, as iproute2 does', async () => {
      const dir = await realpath(netns.dir);
      const entry = (await readMountInfo()).filter((m) => m.mountPoint === dir).pop();
      expect(entry?.optionalFields.some((f) => f.startsWith('shared:'))).toBe(true);
    });

    it('isClosed deletes a stale, unmounted cni-* file and reports it closed', async () => {
      const stale = join(netns.dir, 'cni-00000000-0000-0000-0000-000000000000');
      await writeFile(stale, '');
      expect(await netns.list()).toEqual([]);
      expect(await netns.isClosed(stale)).toBe(true);
      await expect(stat(stale)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('timing: create and remove', async () => {
      const create: number[] = [];
      const remove: number[] = [];
      for (let i = 0; i < 20; i++) {
        let t = performance.now();
        const p = await netns.create();
        create.push(performance.now() - t);
        t = performance.now();
        await netns.remove(p);
        remove.push(performance.now() - t);
      }
      console.log(`netns create median ${median(create).toFixed(1)} ms, remove median ${median(remove).toFixed(1)} ms (20 runs)`);
      expect(await netns.list()).toEqual([]);
    });
  });

  describe('pause rootfs', () => {
    it('builds once per version, never replaces a tree in place, survives concurrent builders and any umask', async () => {
      const dir = join(base, 'rootfs-test', 'rootfs');
      const oldUmask = process.umask(0o077); // a hardened root shell; every mode must still come out right
      let a: string;
      let b: string;
      try {
        [a, b] = await Promise.all([ensurePauseRootfs({ rootfsDir: dir }), ensurePauseRootfs({ rootfsDir: dir })]);
      } finally {
        process.umask(oldUmask);
      }
      expect(a).toBe(b);
      expect(a).toMatch(new RegExp(`^${dir}/[0-9a-f]{16}$`));
      expect(await readdir(dir)).toEqual([a.split('/').pop()]); // no temp trees left
      for (const p of ['pause', 'bin/busybox', 'bin/sh', 'bin/sleep', 'proc', 'sys', 'dev', 'etc/resolv.conf']) await stat(join(a, p));
      for (const [p, mode] of [
        ['', 0o755],
        ['bin', 0o755],
        ['etc', 0o755],
        ['pause', 0o755],
        ['bin/busybox', 0o755],
        ['etc/resolv.conf', 0o644],
      ] as const) {
        expect(((await stat(join(a, p))).mode & 0o777).toString(8)).toBe(mode.toString(8));
      }
      const version = await runChecked(runner, { file: join(a, 'bin/busybox'), args: ['sh', join(a, 'pause'), '-v'], timeoutMs: 5000 });
      expect(version.stdout).toMatch(/^podscope-pause/);

      const inode = (await stat(a)).ino;
      expect(await ensurePauseRootfs({ rootfsDir: dir })).toBe(a);
      expect((await stat(a)).ino).toBe(inode);

      // a damaged or outdated tree is rebuilt beside it, never under a running pause container's mounts
      await writeFile(join(a, 'etc/podscope-pause-version'), 'layout=0\n');
      const c = await ensurePauseRootfs({ rootfsDir: dir });
      expect((await stat(c)).ino).not.toBe(inode);
      expect(await readFile(join(c, 'etc/podscope-pause-version'), 'utf8')).toMatch(/^layout=2 /);
    });
  });

  describe('pause container', () => {
    it('runs inside the netns, reaps orphans, exits on SIGTERM, and stop + delete leave nothing behind', async () => {
      const id = newId();
      const netnsPath = await netns.create();
      const config = podConfig({
        hostname: 'rt-host',
        dns_config: { servers: ['10.10.10.10'], searches: ['google.com'], options: ['ndots:8'] },
        linux: { sysctls: { 'kernel.shm_rmid_forced': '1', 'kernel.domainname': 'podscope.test', 'net.core.somaxconn': '999' } },
      });
      const { paths, spec } = await preparePod(id, config, netnsPath);
      const steps: Parameters<RuntimeStepReporter>[0][] = [];
      const report: RuntimeStepReporter = (s) => steps.push(s);

      const { pid, monitorPid } = await runtime.start(id, paths.bundle, spec, { at, report });
      expect(steps.map((s) => [s.step, s.ok])).toEqual([
        ['conmon.create', true],
        ['runc.start', true],
      ]);
      expect(String(steps[1]?.detail?.command)).toContain(`start ${id}`);
      // conmon is the pause's parent, and the pid it reports
      expect(readFileSync(`/proc/${monitorPid}/comm`, 'utf8').trim()).toBe('conmon');
      expect(Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])).toBe(monitorPid);

      const state = await runtime.state(id, at);
      expect(state).toMatchObject({ id, pid, status: 'running', bundle: paths.bundle });
      expect(await list()).toEqual([id]);
      expect(await isRunning(pid)).toBe(true);

      // the spec really applied: netns, user, oom score, sysctls, resolv.conf, hostname, shm
      expect((await stat(`/proc/${pid}/ns/net`)).ino).toBe((await stat(netnsPath)).ino);
      expect(await readFile(`/proc/${pid}/status`, 'utf8')).toMatch(/^Uid:\s+65535\s/m);
      expect(Number(await readFile(`/proc/${pid}/oom_score_adj`, 'utf8'))).toBe(Math.max(-998, await readEngineOomScoreAdj()));
      expect(await readFile(`/proc/${pid}/root/etc/resolv.conf`, 'utf8')).toBe(
        'search google.com\nnameserver 10.10.10.10\noptions ndots:8\n',
      );
      const sysctl = await runChecked(runner, {
        file: 'nsenter',
        args: [`--net=${netnsPath}`, 'cat', '/proc/sys/net/ipv4/ip_unprivileged_port_start'],
        timeoutMs: 5000,
      });
      expect(sysctl.stdout.trim()).toBe('0');
      expect((await runc(['exec', id, '/bin/busybox', 'hostname'])).stdout.trim()).toBe('rt-host');
      const sysctls = await runc([
        'exec',
        id,
        '/bin/busybox',
        'cat',
        '/proc/sys/kernel/shm_rmid_forced',
        '/proc/sys/kernel/domainname',
        '/proc/sys/net/core/somaxconn',
      ]);
      expect(sysctls.stdout.split('\n').slice(0, 3)).toEqual(['1', 'podscope.test', '999']);
      expect((await runc(['exec', id, '/bin/busybox', 'df', '-k', '/dev/shm'])).stdout).toMatch(/\s65536\s/);

      // an orphan reparented to the pause process is reaped, not left a zombie
      // (it lives 3 s: under the suite's load, seeing it reparented took over the 1 s a shorter one lived)
      await runc(['exec', id, '/bin/sh', '-c', 'sleep 3 </dev/null >/dev/null 2>&1 & exit 0']);
      const orphan = await waitFor('the orphan to be reparented to pause', async () =>
        (await childrenOf(pid)).find((c) => c.cmdline === 'sleep 3'),
      );
      await waitFor(
        'the orphan to be reaped',
        async () => ((await childrenOf(pid)).some((c) => c.pid === orphan.pid) ? undefined : true),
        10_000,
      );
      expect((await childrenOf(pid)).filter((c) => c.state === 'Z')).toEqual([]);

      // SIGTERM: pid 1 only gets signals it handles, so reaching "stopped" proves the trap ran
      expect(await runtime.exitInfo(id, paths.bundle)).toBeUndefined();
      await runc(['kill', id, 'TERM']);
      await waitFor('the pause to stop on SIGTERM', async () => ((await runtime.state(id, at))?.status === 'stopped' ? true : undefined));
      // conmon wrote the exit (status 0: the trap's) and the time, then exited
      const exit = await waitFor('the exit file', () => runtime.exitInfo(id, paths.bundle));
      expect(exit.exitCode).toBe(0);
      expect(Math.abs(Number(BigInt(exit.finishedAtNs) / 1_000_000n) - Date.now())).toBeLessThan(60_000);
      // it exits then (a zombie until whatever adopted the daemon reaps it)
      await waitFor('conmon to exit', async () => ((await isRunning(monitorPid)) ? undefined : true));

      await runtime.stop(id, at, { report });
      await runtime.delete(id, at, { report });
      await runtime.delete(id, at, { report });
      await runtime.stop(id, at, { report });
      expect(steps.slice(2).map((s) => [s.step, s.ok])).toEqual([
        ['runc.kill', true],
        ['runc.wait', true],
        ['runc.delete', true],
        ['runc.delete', true],
        ['runc.kill', true],
      ]);
      expect(await runtime.state(id, at)).toBeUndefined();
      expect(await list()).toEqual([]);
      expect(await isRunning(pid)).toBe(false);

      await netns.remove(netnsPath);
      await removeSandboxFiles(runner, paths);
      expect(await netns.list()).toEqual([]);
      expect(await mountsUnder(join(base, 'run'))).toEqual([]);
      await expect(stat(paths.runtimeDir)).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(stat(paths.filesDir)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('the pause process exits with status 0 on SIGTERM (seen through a foreground `runc run`)', async () => {
      const id = newId();
      const config = podConfig({ linux: { security_context: { namespace_options: { network: 2 } } } });
      const { paths, spec } = await preparePod(id, config);
      await mkdir(paths.bundle, { recursive: true });
      await writeFile(join(paths.bundle, 'config.json'), JSON.stringify(spec));
      const child = spawn('runc', ['--root', runcRoot, 'run', '--bundle', paths.bundle, id], { stdio: 'ignore' });
      foreground.push(child);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      await waitFor('the foreground pause to run', async () => ((await runtime.state(id, at))?.status === 'running' ? true : undefined));
      await runc(['kill', id, 'TERM']);
      expect(await exited).toBe(0);
      await runtime.delete(id, at);
      await removeSandboxFiles(runner, paths);
    });

    // With the host's PID namespace the pause's own child is not killed with it (no pid-namespace teardown):
    // stop uses `runc kill --all`, as containerd's shim kills the whole cgroup for shared PID namespaces.
    it('stop of a host-PID pause leaves no process of it behind', async () => {
      const id = newId();
      const config = podConfig({ linux: { security_context: { namespace_options: { network: 2, pid: 2 } } } });
      const { paths, spec } = await preparePod(id, config);
      const { pid } = await runtime.start(id, paths.bundle, spec, { at });
      const children = () =>
        readdirSync('/proc')
          .filter((d) => /^\d+$/.test(d))
          .filter((d) => {
            try {
              const st = readFileSync(`/proc/${d}/stat`, 'utf8');
              const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
              return Number(f[1]) === pid && f[0] !== 'Z';
            } catch {
              return false;
            }
          });
      await waitFor('the pause to start its sleep', async () => (children().length > 0 ? true : undefined));
      const sleeper = Number(children()[0]);
      await runtime.stop(id, at);
      const alive = () => {
        try {
          return readFileSync(`/proc/${sleeper}/stat`, 'utf8').split(') ')[1]!.startsWith('Z') === false;
        } catch {
          return false;
        }
      };
      expect(alive()).toBe(false);
      await runtime.delete(id, at);
      await removeSandboxFiles(runner, paths);
    });

    it('a runc failure is a RuntimeError carrying runc’s own message, and leaves no container', async () => {
      const id = newId();
      const netnsPath = await netns.create();
      const { paths, spec } = await preparePod(id, podConfig(), netnsPath);
      const broken = { ...spec, process: { ...spec.process, args: ['/no-such-entrypoint'] } };
      const steps: Parameters<RuntimeStepReporter>[0][] = [];
      const error = await runtime.start(id, paths.bundle, broken, { at, report: (s) => steps.push(s) }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'RuntimeError', message: expect.stringMatching(/^runc create failed: .*no-such-entrypoint/) });
      expect((error as { details: { runcErrors: string[] } }).details.runcErrors.length).toBeGreaterThan(0);
      expect(steps.map((s) => [s.step, s.ok])).toEqual([
        ['conmon.create', false],
        ['runc.delete', true],
      ]);
      expect(await list()).toEqual([]);
      expect(conmonsOf(id)).toEqual([]);
      await netns.remove(netnsPath);
      await removeSandboxFiles(runner, paths);
    });

    it('stop returns once conmon wrote the exit (137: 128+SIGKILL) and exited; a start canceled during create leaves no conmon and no container', async () => {
      const id = newId();
      const { paths, spec } = await preparePod(id, podConfig({ linux: { security_context: { namespace_options: { network: 2 } } } }));
      // stop kills it and returns once conmon has written the exit and exited
      const { monitorPid } = await runtime.start(id, paths.bundle, spec, { at });
      await runtime.stop(id, at);
      expect(await isRunning(monitorPid)).toBe(false);
      expect((await runtime.exitInfo(id, paths.bundle))?.exitCode).toBe(137);
      await runtime.delete(id, at);
      await removeSandboxFiles(runner, paths);

      // a start canceled while conmon runs `runc create`: conmon is ended with what it runs, the container deleted
      const second = newId();
      const p2 = await preparePod(second, podConfig({ linux: { security_context: { namespace_options: { network: 2 } } } }));
      const error = await runtime.start(second, p2.paths.bundle, p2.spec, { at, signal: AbortSignal.timeout(5) }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'Canceled' });
      expect(await list()).toEqual([]);
      expect(conmonsOf(second)).toEqual([]);
      await removeSandboxFiles(runner, p2.paths);
    });

    it('timing: conmon + runc create + runc start, and stop + delete', async () => {
      const run: number[] = [];
      const stopDelete: number[] = [];
      for (let i = 0; i < 8; i++) {
        const id = newId();
        const netnsPath = await netns.create();
        const { paths, spec } = await preparePod(id, podConfig(), netnsPath);
        let t = performance.now();
        await runtime.start(id, paths.bundle, spec, { at });
        run.push(performance.now() - t);
        t = performance.now();
        await runtime.stop(id, at);
        await runtime.delete(id, at);
        stopDelete.push(performance.now() - t);
        await netns.remove(netnsPath);
        await removeSandboxFiles(runner, paths);
      }
      console.log(
        `pause start under conmon median ${median(run).toFixed(1)} ms; stop+delete median ${median(stopDelete).toFixed(1)} ms (8 runs)`,
      );
      expect(await list()).toEqual([]);
    });
  });
});
