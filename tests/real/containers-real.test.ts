/**
 * Containers with real parts: a real pod (netns, Debian's CNI plugins, runc pause) and busybox containers under runc
 * with the log shim. Needs root. Bridge, subnets and host port from the test kit's allocator (a lease),
 * temp dirs /tmp/podscope-c1-*. Everything is removed in afterAll, even when a test fails.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { ContainerConfigInput, ContainerEvent } from '../../shared/domain/container';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { hasCode } from '../../shared/domain/errors';
import { BUSYBOX_IMAGE, INDEX_HTML, LocalBusyboxStore, buildBusyboxTree } from '../../testkit/local-busybox-store';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

let hostPort: number;
// conmon writes the offset form of RFC3339Nano (+00:00), which the CRI format allows
const CRI_LOG_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(Z|[+-]\d\d:\d\d) (stdout|stderr) [FP] /;

function httpGet(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/index.html', timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const seccompMode = (pid: number) => /^Seccomp:\s+(\d)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];

let env: RealEnv;
let engine: SandboxEngine;
let logDir: string;
let treeDir: string;
const events: ContainerEvent[] = [];

beforeAll(async () => {
  env = await createRealEnv({ tag: 'c1' });
  hostPort = env.port(0);
  treeDir = await mkdtemp(join(tmpdir(), 'podscope-c1-tree-'));
  await buildBusyboxTree(join(treeDir, 'busybox'));
  logDir = await mkdtemp(join(tmpdir(), 'podscope-c1-logs-'));
  engine = await env.engine({}, { images: new LocalBusyboxStore(join(treeDir, 'busybox')) });
  engine.subscribe((e) => {
    if (e.type.startsWith('container.')) events.push(e as ContainerEvent);
  });
});

afterAll(async () => {
  await env?.teardown();
  if (treeDir) await rm(treeDir, { recursive: true, force: true });
  if (logDir) await rm(logDir, { recursive: true, force: true });
});

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return {
    metadata: { name, namespace: 'podscope-c1', uid: `uid-${name}` },
    hostname: name,
    log_directory: join(logDir, name),
    linux: { security_context: { seccomp: { profile_type: 0 } } },
    ...extra,
  };
}

function container(name: string, command: string[], extra: Partial<ContainerConfigInput> = {}): ContainerConfigInput {
  return {
    metadata: { name },
    image: { image: BUSYBOX_IMAGE },
    command,
    log_path: `${name}/0.log`,
    linux: { security_context: { seccomp: { profile_type: 0 } } },
    ...extra,
  };
}

describe('a busybox httpd container in a real pod', () => {
  let podId: string;
  let webId: string;

  it('creates and starts it; the host reaches its page on 127.0.0.1 through the pod host port', async () => {
    ({ id: podId } = await engine.run({ config: pod('web', { port_mappings: [{ container_port: 8080, host_port: hostPort }] }) }));
    const t0 = performance.now();
    ({ id: webId } = await engine.createContainer({
      podSandboxId: podId.slice(0, 13),
      config: container('httpd', ['sh', '-c', 'echo hello-out; echo hello-err >&2; exec httpd -f -p 8080 -h /www']),
    }));
    await engine.startContainer(webId);
    console.log(`CreateContainer+StartContainer: ${(performance.now() - t0).toFixed(1)} ms`);
    const st = await engine.containerStatus(webId);
    expect(st.state).toBe('CONTAINER_RUNNING');
    expect(st.name).toBe('httpd_web_podscope-c1_uid-web_0');
    const page = await until('the page', () =>
      httpGet(hostPort).then(
        (b) => b,
        () => undefined,
      ),
    );
    expect(page).toBe(INDEX_HTML);
  });

  it('shares the pause process network, IPC and UTS namespaces and sees the pod hostname', async () => {
    const c = await engine.containerStatus(webId);
    const p = await engine.status(podId);
    for (const ns of ['net', 'ipc', 'uts', 'pid']) {
      expect(execFileSync('readlink', [`/proc/${c.pid}/ns/${ns}`]).toString()).toBe(
        execFileSync('readlink', [`/proc/${p.pause.pid}/ns/${ns}`]).toString(),
      );
    }
    const r = await engine.execSync(webId, ['cat', '/etc/hostname'], 5);
    expect(Buffer.from(r.stdout).toString()).toBe('web\n');
  });

  it('writes stdout and stderr to log_path in the CRI format', async () => {
    const st = await engine.containerStatus(webId);
    expect(st.logPath).toBe(join(logDir, 'web', 'httpd/0.log'));
    const lines = await until('two log lines', async () => {
      const l = readFileSync(st.logPath, 'utf8').split('\n').filter(Boolean);
      return l.length >= 2 ? l : undefined;
    });
    for (const l of lines) expect(l).toMatch(CRI_LOG_LINE);
    expect(lines.some((l) => / stdout F hello-out$/.test(l))).toBe(true);
    expect(lines.some((l) => / stderr F hello-err$/.test(l))).toBe(true);
  });

  it('ExecSync returns stdout, stderr and the exit code; a timeout is DeadlineExceeded', async () => {
    const r = await engine.execSync(webId, ['sh', '-c', 'echo out; echo err >&2; exit 3'], 10);
    expect(Buffer.from(r.stdout).toString()).toBe('out\n');
    expect(Buffer.from(r.stderr).toString()).toBe('err\n');
    expect(r.exitCode).toBe(3);
    const err = await engine.execSync(webId, ['sleep', '5'], 1).catch((e: unknown) => e);
    expect(hasCode(err, 'DeadlineExceeded')).toBe(true);
  });

  it('UpdateContainerResources reaches the running container cgroup (runc update); stats read it', async () => {
    await engine.updateContainerResources(webId, { cpu_shares: 512, memory_limit_in_bytes: 96 << 20 });
    const st = await engine.containerStatus(webId);
    const path = (st.ociSpec as { linux: { cgroupsPath: string } }).linux.cgroupsPath;
    expect(readFileSync(`/sys/fs/cgroup/cpu/${path}/cpu.shares`, 'utf8').trim()).toBe('512');
    expect(readFileSync(`/sys/fs/cgroup/memory/${path}/memory.limit_in_bytes`, 'utf8').trim()).toBe(String(96 << 20));
    expect(st.resources).toMatchObject({ cpu_shares: 512, memory_limit_in_bytes: 96 << 20 });
    const stats = await engine.containerStats(webId);
    expect(BigInt(stats.memoryWorkingSetBytes!)).toBeGreaterThan(0n);
    expect(BigInt(stats.cpuUsageCoreNs!)).toBeGreaterThan(0n);
  });

  it('runs the pause and the container under seccomp filter mode 2 for RuntimeDefault, and says so in the status', async () => {
    const c = await engine.containerStatus(webId);
    const p = await engine.status(podId);
    expect(seccompMode(c.pid!)).toBe('2');
    expect(seccompMode(p.pause.pid!)).toBe('2');
    expect(c.seccomp).toBe('runtime/default');
    expect(p.seccomp).toBe('runtime/default');
    // the allowlist bites: unshare(2) needs CAP_SYS_ADMIN, which the container lacks
    const r = await engine.execSync(webId, ['sh', '-c', 'cat /proc/self/status | grep Seccomp'], 5);
    expect(Buffer.from(r.stdout).toString()).toMatch(/Seccomp:\s+2/);
  });

  it('honours unconfined (Seccomp 0) and a localhost profile (Seccomp 2, its rules really apply)', async () => {
    const free = await engine.createContainer({
      podSandboxId: podId,
      config: container('free', ['sleep', '100'], { linux: { security_context: { seccomp: { profile_type: 1 } } } }),
    });
    await engine.startContainer(free.id);
    expect(seccompMode((await engine.containerStatus(free.id)).pid!)).toBe('0');
    // allow everything but mkdir/mkdirat, which fail with EACCES (13)
    const profile = join(logDir, 'no-mkdir.json');
    writeFileSync(
      profile,
      JSON.stringify({
        defaultAction: 'SCMP_ACT_ALLOW',
        syscalls: [{ names: ['mkdir', 'mkdirat'], action: 'SCMP_ACT_ERRNO', errnoRet: 13 }],
      }),
    );
    const custom = await engine.createContainer({
      podSandboxId: podId,
      config: container('custom', ['sleep', '100'], {
        linux: { security_context: { seccomp: { profile_type: 2, localhost_ref: profile } } },
      }),
    });
    await engine.startContainer(custom.id);
    const st = await engine.containerStatus(custom.id);
    expect(st.seccomp).toBe(`localhost/${profile}`);
    expect(seccompMode(st.pid!)).toBe('2');
    const r = await engine.execSync(custom.id, ['mkdir', '/tmp/x'], 5);
    expect(r.exitCode).not.toBe(0);
    expect(Buffer.from(r.stderr).toString()).toMatch(/Permission denied/);
    expect((await engine.execSync(free.id, ['mkdir', '/tmp/x'], 5)).exitCode).toBe(0);
    await engine.removeContainer(free.id);
    await engine.removeContainer(custom.id);
  });

  it('ReopenContainerLog: after the log is renamed (rotation), new lines go to a fresh log_path', async () => {
    const { id } = await engine.createContainer({
      podSandboxId: podId,
      config: container('ticker', ['sh', '-c', 'i=0; while true; do echo tick$i; i=$((i+1)); sleep 0.1; done']),
    });
    await engine.startContainer(id);
    const { logPath } = await engine.containerStatus(id);
    await until('a tick', async () => (readFileSync(logPath, 'utf8').includes('tick1') ? true : undefined));
    renameSync(logPath, `${logPath}.1`);
    await engine.reopenContainerLog(id);
    const fresh = await until('the fresh log', async () =>
      existsSync(logPath) && readFileSync(logPath, 'utf8').includes('tick') ? readFileSync(logPath, 'utf8') : undefined,
    );
    for (const l of fresh.split('\n').filter(Boolean)) expect(l).toMatch(CRI_LOG_LINE);
    expect(readFileSync(`${logPath}.1`, 'utf8')).toContain('stdout F tick0');
    await engine.removeContainer(id);
  });

  it('a container killed by the OOM killer exits with 137 and reason OOMKilled', async () => {
    const { id } = await engine.createContainer({
      podSandboxId: podId,
      // dd allocates its 64 MiB block in one go: far over the 16 MiB limit
      config: container('hog', ['dd', 'if=/dev/zero', 'of=/dev/null', 'bs=64M', 'count=4'], {
        linux: { resources: { memory_limit_in_bytes: 16 << 20 } },
      }),
    });
    await engine.startContainer(id);
    const st = await until('the exit', async () => {
      const s = await engine.containerStatus(id);
      return s.state === 'CONTAINER_EXITED' ? s : undefined;
    });
    expect(st).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
    await engine.removeContainer(id);
  });

  it('stop sends SIGTERM, then SIGKILL after the timeout, and records the exit', async () => {
    const { id } = await engine.createContainer({
      podSandboxId: podId,
      config: container('stubborn', ['sh', '-c', 'trap "echo got-term" TERM; echo ready; while true; do sleep 1; done']),
    });
    await engine.startContainer(id);
    const st0 = await engine.containerStatus(id);
    await until('ready', async () => (readFileSync(st0.logPath, 'utf8').includes('ready') ? true : undefined));
    await engine.stopContainer(id, 2);
    const st = await engine.containerStatus(id);
    expect(st.state).toBe('CONTAINER_EXITED');
    expect(st.exitCode).toBe(137);
    expect(st.reason).toBe('Error');
    expect(BigInt(st.finishedAtNs)).toBeGreaterThan(BigInt(st.startedAtNs));
    expect(readFileSync(st.logPath, 'utf8')).toMatch(/stdout F got-term/);
    await engine.removeContainer(id);
  });

  it('notices a container that exits by itself and announces it as an event', async () => {
    const { id } = await engine.createContainer({ podSandboxId: podId, config: container('quitter', ['sh', '-c', 'exit 7']) });
    await engine.startContainer(id);
    const st = await until('the exit', async () => {
      const s = await engine.containerStatus(id);
      return s.state === 'CONTAINER_EXITED' ? s : undefined;
    });
    expect(st.exitCode).toBe(7);
    expect(st.reason).toBe('Error');
    await until('the event', async () =>
      events.some((e) => e.type === 'container.changed' && e.id === id && e.summary.state === 'CONTAINER_EXITED') ? true : undefined,
    );
    const done = await engine.createContainer({ podSandboxId: podId, config: container('done', ['true']) });
    await engine.startContainer(done.id);
    const st2 = await until('the exit', async () => {
      const s = await engine.containerStatus(done.id);
      return s.state === 'CONTAINER_EXITED' ? s : undefined;
    });
    expect(st2).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });

  it('a create that fails (missing host path) leaves nothing behind and frees the name', async () => {
    const cfg = container('bad', ['true'], { mounts: [{ container_path: '/data', host_path: join(logDir, 'does-not-exist') }] });
    const err = await engine.createContainer({ podSandboxId: podId, config: cfg }).catch((e: unknown) => e);
    expect(hasCode(err, 'InvalidArgument')).toBe(true);
    expect((await engine.listContainers({ podSandboxId: podId })).map((c) => c.metadata.name)).not.toContain('bad');
    const ok = await engine.createContainer({ podSandboxId: podId, config: container('bad', ['true']) });
    await engine.removeContainer(ok.id);
  });

  it('remove deletes the runc container, the bundle and the rootfs', async () => {
    const { id } = await engine.createContainer({ podSandboxId: podId, config: container('short', ['sleep', '100']) });
    await engine.startContainer(id);
    const st = await engine.containerStatus(id);
    const bundle = (st.ociSpec as { root: { path: string } }).root.path;
    expect(existsSync(bundle)).toBe(true);
    await engine.removeContainer(id);
    await expect(engine.containerStatus(id)).rejects.toMatchObject({ code: 'NotFound' });
    await engine.removalsFinished();
    expect(existsSync(bundle)).toBe(false);
    expect(execFileSync('runc', ['--root', join(env.options.runDir!, 'containers', 'runc'), 'list', '-q']).toString()).not.toContain(id);
    await expect(engine.containerStatus(id)).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('stopping the pod stops its containers first; removing it removes them', async () => {
    await engine.stop(podId);
    const st = await engine.containerStatus(webId);
    expect(st.state).toBe('CONTAINER_EXITED');
    await engine.remove(podId);
    expect(await engine.listContainers({ podSandboxId: podId })).toEqual([]);
    await engine.removalsFinished();
    expect(
      execFileSync('runc', ['--root', join(env.options.runDir!, 'containers', 'runc'), 'list', '-q'])
        .toString()
        .trim(),
    ).toBe('');
  });
});
