/**
 * conmon as the container monitor (EngineOptions.containerMonitor = 'conmon'), on each runtime handler: a real pod per
 * handler, busybox containers created, started, logged in the CRI format by conmon, exec'd, updated, stopped, noticed
 * when they exit or are OOM-killed (on crun too: the container keeps its cgroup until deleted), their log reopened,
 * kept running across an engine restart, and removed; attach and tty containers are refused with the reason. Needs
 * root, runc, crun and conmon. Bridge psrt-cm, subnets 10.114.0.0/24 and fd00:114::/64, temp dirs /tmp/prt2-*.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/sandbox/service';
import type { ContainerConfigInput } from '../../shared/domain/container';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { hasCode } from '../../shared/domain/errors';
import { BUSYBOX_IMAGE, LocalBusyboxStore, buildBusyboxTree } from '../../testkit/local-busybox-store';
import { processesMentioning } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

// conmon writes the offset form of RFC3339Nano (+00:00), which the CRI format allows
const CRI_LOG_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(Z|[+-]\d\d:\d\d) (stdout|stderr) [FP] /;

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, cb: () => void) {
    this.text += chunk.toString();
    cb();
  }
}

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

let env: RealEnv;
let engine: SandboxEngine;
let logDir: string;
let treeDir: string;
let images: LocalBusyboxStore;
const CONMON = { containerMonitor: 'conmon' } as const;

beforeAll(async () => {
  env = await createRealEnv({ tag: 'prt2', subnet: 114, bridge: 'psrt-cm', tempPrefix: 'prt2-env-' });
  treeDir = await mkdtemp(join(tmpdir(), 'prt2-tree-'));
  await buildBusyboxTree(join(treeDir, 'busybox'));
  logDir = await mkdtemp(join(tmpdir(), 'prt2-logs-'));
  images = new LocalBusyboxStore(join(treeDir, 'busybox'));
  engine = await env.engine(CONMON, { images });
});

afterAll(async () => {
  const t0 = Date.now();
  let left = processesMentioning([env.dir]);
  try {
    await env?.teardown();
    // every log shim and session process is gone once the pods are removed
    while (left.length > 0 && Date.now() - t0 < 5000) {
      await new Promise((r) => setTimeout(r, 50));
      left = processesMentioning([env.dir]);
    }
    for (const p of left) process.kill(p.pid, 'SIGKILL');
  } finally {
    if (treeDir) await rm(treeDir, { recursive: true, force: true });
    if (logDir) await rm(logDir, { recursive: true, force: true });
  }
  expect(left).toEqual([]);
});

function pod(name: string): PodSandboxConfigInput {
  return {
    metadata: { name, namespace: 'podscope-prt2', uid: `uid-${name}` },
    hostname: name,
    log_directory: join(logDir, name),
    linux: { security_context: { seccomp: { profile_type: 0 } } },
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

describe.each(['runc', 'crun'] as const)('containers on the %s handler under conmon', (handler) => {
  let podId: string;
  let seq = 0;
  const root = () => join(env.options.runDir!, 'containers', handler);

  async function start(command: string[], extra: Partial<ContainerConfigInput> = {}): Promise<string> {
    const { id } = await engine.createContainer({ podSandboxId: podId, config: container(`${handler}${seq++}`, command, extra) });
    await engine.startContainer(id);
    return id;
  }

  async function exited(id: string) {
    return until(
      'the exit',
      async () => {
        const s = await engine.containerStatus(id);
        return s.state === 'CONTAINER_EXITED' ? s : undefined;
      },
      15_000,
    );
  }

  beforeAll(async () => {
    ({ id: podId } = await engine.run({ config: pod(`p-${handler}`), runtimeHandler: handler }));
  });

  afterAll(async () => {
    if (podId) await engine.remove(podId).catch(() => undefined);
  });

  it('the pod remembers its handler; its container is made by that runtime under its own root, logs in CRI format', async () => {
    expect((await engine.status(podId)).runtimeHandler).toBe(handler);
    const id = await start(['sh', '-c', 'echo hello-out; echo hello-err >&2; exec sleep 100000']);
    const st = await engine.containerStatus(id);
    expect(st.state).toBe('CONTAINER_RUNNING');
    // the container's state is in the handler's root (crun and runc keep different formats there), not the other's
    expect(execFileSync(handler, ['--root', root(), 'list', '-q']).toString()).toContain(id);
    const other = handler === 'runc' ? 'crun' : 'runc';
    expect(existsSync(join(env.options.runDir!, 'containers', other, id))).toBe(false);
    const lines = await until('two log lines', () => {
      const l = readFileSync(st.logPath, 'utf8').split('\n').filter(Boolean);
      return l.length >= 2 ? l : undefined;
    });
    for (const l of lines) expect(l).toMatch(CRI_LOG_LINE);
    expect(lines.some((l) => / stdout F hello-out$/.test(l))).toBe(true);
    expect(lines.some((l) => / stderr F hello-err$/.test(l))).toBe(true);
    // the seccomp filter of RuntimeDefault applies on either runtime
    expect(/^Seccomp:\s+(\d)/m.exec(readFileSync(`/proc/${st.pid}/status`, 'utf8'))?.[1]).toBe('2');
  });

  it('ExecSync returns stdout, stderr and the exit code; a timeout is DeadlineExceeded', async () => {
    const id = await start(['sleep', '100000']);
    const r = await engine.execSync(id, ['sh', '-c', 'echo out; echo err >&2; exit 3'], 10);
    expect(Buffer.from(r.stdout).toString()).toBe('out\n');
    expect(Buffer.from(r.stderr).toString()).toBe('err\n');
    expect(r.exitCode).toBe(3);
    const err = await engine.execSync(id, ['sleep', '5'], 1).catch((e: unknown) => e);
    expect(hasCode(err, 'DeadlineExceeded')).toBe(true);
  });

  it('streaming exec: pipes carry stdin and keep stderr apart; a tty gives the process a terminal', async () => {
    const id = await start(['sleep', '100000']);
    const stdin = new PassThrough();
    const out = new Sink();
    const err = new Sink();
    const done = engine.streaming.exec({
      containerId: id,
      cmd: ['sh', '-c', 'cat; echo e >&2; exit 4'],
      stdin,
      stdout: out,
      stderr: err,
      tty: false,
    });
    stdin.end('piped\n');
    expect((await done).exitCode).toBe(4);
    expect(out.text).toBe('piped\n');
    expect(err.text).toBe('e\n');
    const ttyOut = new Sink();
    const r = await engine.streaming.exec({
      containerId: id,
      cmd: ['busybox', 'tty'],
      stdin: null,
      stdout: ttyOut,
      stderr: null,
      tty: true,
    });
    expect(r.exitCode).toBe(0);
    expect(ttyOut.text).toMatch(/\/dev\/pts\/\d+/);
  });

  it('attach and a tty container are refused with the reason (conmon serves them over SOCK_SEQPACKET)', async () => {
    const id = await start(['sh'], { stdin: true });
    const err = await engine.streaming
      .attach({ containerId: id, stdin: new PassThrough(), stdout: new Sink(), stderr: new Sink(), tty: false })
      .catch((e: unknown) => e);
    expect(hasCode(err, 'FailedPrecondition')).toBe(true);
    expect((err as Error).message).toMatch(/SOCK_SEQPACKET/);
    const tty = await start(['sh'], { tty: true }).catch((e: unknown) => e);
    expect((tty as Error).message).toMatch(/tty container cannot run under the conmon monitor/);
  });

  it('conmon watches the container (its parent) with a few MiB; ReopenContainerLog goes through its ctl fifo', async () => {
    const id = await start(['sh', '-c', 'i=0; while true; do echo tick$i; i=$((i+1)); sleep 0.1; done']);
    const st = await engine.containerStatus(id);
    const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${st.pid}/status`, 'utf8'))?.[1]);
    expect(readFileSync(`/proc/${ppid}/comm`, 'utf8').trim()).toBe('conmon');
    const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${ppid}/status`, 'utf8'))?.[1]);
    console.log(`conmon RSS (${handler}): ${(rssKiB / 1024).toFixed(1)} MiB`);
    await until('a tick', () => (readFileSync(st.logPath, 'utf8').includes('tick1') ? true : undefined));
    renameSync(st.logPath, `${st.logPath}.1`);
    await engine.reopenContainerLog(id);
    const fresh = await until('the fresh log', () =>
      existsSync(st.logPath) && readFileSync(st.logPath, 'utf8').includes('tick') ? readFileSync(st.logPath, 'utf8') : undefined,
    );
    for (const l of fresh.split('\n').filter(Boolean)) expect(l).toMatch(CRI_LOG_LINE);
    expect(readFileSync(`${st.logPath}.1`, 'utf8')).toMatch(/stdout F tick0/);
  });

  it('UpdateContainerResources reaches the running container cgroup', async () => {
    const id = await start(['sleep', '100000']);
    await engine.updateContainerResources(id, { cpu_shares: 512, memory_limit_in_bytes: 96 << 20 });
    const st = await engine.containerStatus(id);
    const path = (st.ociSpec as { linux: { cgroupsPath: string } }).linux.cgroupsPath;
    expect(readFileSync(`/sys/fs/cgroup/cpu/${path}/cpu.shares`, 'utf8').trim()).toBe('512');
    expect(readFileSync(`/sys/fs/cgroup/memory/${path}/memory.limit_in_bytes`, 'utf8').trim()).toBe(String(96 << 20));
  });

  it('stop sends SIGTERM, then SIGKILL after the timeout; an exit by itself and an OOM kill are noticed with their codes', async () => {
    const stubborn = await start(['sh', '-c', 'trap "echo got-term" TERM; echo ready; while true; do sleep 1; done']);
    const st0 = await engine.containerStatus(stubborn);
    await until('ready', () => (readFileSync(st0.logPath, 'utf8').includes('ready') ? true : undefined));
    await engine.stopContainer(stubborn, 1);
    expect(await engine.containerStatus(stubborn)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137, reason: 'Error' });
    expect(readFileSync(st0.logPath, 'utf8')).toMatch(/stdout F got-term/);
    const quitter = await start(['sh', '-c', 'exit 7']);
    expect(await exited(quitter)).toMatchObject({ exitCode: 7, reason: 'Error' });
    const hog = await start(['dd', 'if=/dev/zero', 'of=/dev/null', 'bs=64M', 'count=4'], {
      linux: { resources: { memory_limit_in_bytes: 16 << 20 }, security_context: { seccomp: { profile_type: 0 } } },
    });
    // under conmon the container keeps its cgroup (and its OOM count) until it is deleted, on crun too
    expect(await exited(hog)).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
  });

  it('a container keeps running when the engine closes; a new engine sees it running, stops and removes it', async () => {
    const id = await start(['sleep', '100000']);
    const { pid } = await engine.containerStatus(id);
    await engine.close();
    engine = await env.engine(CONMON, { images });
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    expect(await engine.containerStatus(id)).toMatchObject({ state: 'CONTAINER_RUNNING', pid });
    await engine.stopContainer(id, 0);
    expect(await engine.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137 });
    await engine.removeContainer(id);
    await engine.removalsFinished();
    expect(execFileSync(handler, ['--root', root(), 'list', '-q']).toString()).not.toContain(id);
    await expect(engine.containerStatus(id)).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('removing the pod removes its containers and their runtime state', async () => {
    const ids = (await engine.listContainers({ podSandboxId: podId })).map((c) => c.id);
    expect(ids.length).toBeGreaterThan(0);
    await engine.remove(podId);
    podId = '';
    await engine.removalsFinished();
    const left = execFileSync(handler, ['--root', root(), 'list', '-q']).toString();
    for (const id of ids) expect(left).not.toContain(id);
  });
});
