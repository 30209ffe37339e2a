/**
 * The container verbs of the real engine over the touch-point fakes (runc, images, cgroups, host checks): states,
 * names, undo on every failure, stop escalation, exit watching, pod stop/remove cascading, recovery.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildTestEngine, createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { fakeLiveReader } from '../../testkit/fakes/fake-kernel-commands';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import type { ContainerConfigInput } from '../../shared/domain/container';
import { PodscopeError } from '../../shared/domain/errors';
import type { ContainerOciSpec } from '../../electron/engine/runtime/container-spec';

let t: TestEngine;
let podId: string;

const IMAGE = 'podscope.test/busybox:1';
const IMAGE_SPEC = {
  config: { Cmd: ['sh'], Env: ['PATH=/bin', 'A=image'], StopSignal: 'SIGQUIT' },
  layers: [{ 'etc/passwd': 'root:x:0:0::/:/bin/sh\nweb:x:1000:1001::/:/bin/sh\n', 'etc/group': 'web:x:1001:\nstaff:x:50:web\n' }],
};

function ctr(name: string, extra: Partial<ContainerConfigInput> = {}): ContainerConfigInput {
  return { metadata: { name }, image: { image: IMAGE }, command: ['sleep', '100'], log_path: `${name}.log`, ...extra };
}

/** a second engine over the same state dir and fakes, as after a restart of the app */
function engineOverSameState(): SandboxEngine {
  return buildTestEngine({
    options: t.engine.options,
    netns: t.netns,
    cni: t.cni,
    runtime: t.runtime,
    files: t.files,
    liveReader: fakeLiveReader(t.kernel),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async (pid) => t.containerRuntime.alive(pid) || (await t.runtime.processAlive(pid)),
    images: t.images,
    containers: { runtime: t.containerRuntime, cgroups: t.cgroups, host: t.host },
  });
}

beforeEach(async () => {
  t = await createTestEngine({ tmpPrefix: 'podscope-c1-unit-' });
  await t.loadImage(IMAGE, IMAGE_SPEC);
  ({ id: podId } = await t.engine.run({
    config: { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, hostname: 'p', log_directory: join(t.dir, 'logs') },
  }));
});

afterEach(async () => {
  await t.close();
});

/** Nothing of a failed create remains: no record, no rootfs user, no container dir or bundle, no log file, name free. */
async function expectNothingLeft(name: string) {
  const containersDir = join(t.dir, 'state', 'containers');
  expect(existsSync(containersDir) ? readdirSync(containersDir) : []).toEqual([]);
  const bundles = join(t.dir, 'run', 'containers');
  expect(existsSync(bundles) ? readdirSync(bundles) : []).toEqual([]);
  expect(await t.imageUsers()).toEqual([]);
  expect(t.mounter.mounted.size).toBe(0);
  expect(existsSync(join(t.dir, 'logs', `${name}.log`))).toBe(false);
  expect(t.containerRuntime.containers.size).toBe(0);
}

describe('CreateContainer', () => {
  it('creates a CREATED container named <name>_<pod>_<ns>_<uid>_<attempt> with a 64-hex id and a unique-prefix lookup', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId.slice(0, 8), config: ctr('web') });
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const st = await t.engine.containerStatus(id.slice(0, 10));
    expect(st).toMatchObject({
      state: 'CONTAINER_CREATED',
      name: 'web_p_ns_u1_0',
      podSandboxId: podId,
      image: IMAGE,
      stopSignal: 'SIGQUIT',
    });
    expect(st.logPath).toBe(join(t.dir, 'logs', 'web.log'));
    expect(t.events.some((e) => e.type === 'container.added' && e.id === id)).toBe(true);
  });

  it('refuses a second container with the same name and attempt (AlreadyExists), as containerd reserves names one-to-one', async () => {
    await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await expect(t.engine.createContainer({ podSandboxId: podId, config: ctr('web') })).rejects.toMatchObject({ code: 'AlreadyExists' });
    await t.engine.createContainer({ podSandboxId: podId, config: ctr('web', { metadata: { name: 'web', attempt: 1 } }) });
  });

  it('is NotFound for an unknown sandbox or image (naming the image), FailedPrecondition for a stopped sandbox', async () => {
    await expect(t.engine.createContainer({ podSandboxId: 'ffff', config: ctr('web') })).rejects.toMatchObject({ code: 'NotFound' });
    const err = await t.engine
      .createContainer({ podSandboxId: podId, config: ctr('web', { image: { image: 'nope:1' } }) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NotFound' });
    expect((err as Error).message).toContain('"nope:1"');
    await expectNothingLeft('web');
    await t.engine.stop(podId);
    await expect(t.engine.createContainer({ podSandboxId: podId, config: ctr('web') })).rejects.toMatchObject({
      code: 'FailedPrecondition',
    });
  });

  const failures: [string, () => Partial<ContainerConfigInput> | void][] = [
    [
      'the rootfs cannot be prepared',
      () => {
        t.mounter.mountError = new PodscopeError('RuntimeError', 'overlay mount failed');
      },
    ],
    [
      'run_as_username is not in the image /etc/passwd (after the rootfs exists)',
      () => ({ linux: { security_context: { run_as_username: 'ghost' } } }),
    ],
    [
      'the localhost seccomp profile does not exist (after the rootfs exists)',
      () => ({ linux: { security_context: { seccomp: { profile_type: 2, localhost_ref: 'missing.json' } } } }),
    ],
    ['the log file cannot be created (its directory is a file)', () => ({ log_path: 'x/web.log' })],
  ];
  for (const [why, arrange] of failures) {
    it(`leaves nothing behind and frees the name when ${why}`, async () => {
      const extra = arrange() ?? {};
      if (why.includes('log file')) {
        await mkdir(join(t.dir, 'logs'), { recursive: true });
        await writeFile(join(t.dir, 'logs', 'x'), 'not a dir');
      }
      await expect(t.engine.createContainer({ podSandboxId: podId, config: ctr('web', extra) })).rejects.toBeInstanceOf(Error);
      await expectNothingLeft('web');
      expect(await t.engine.listContainers()).toEqual([]);
      // the name is free again
      await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    });
  }

  it('refuses a mount whose host path does not exist (InvalidArgument) before acquiring anything', async () => {
    const prepareRootfs = vi.spyOn(t.images, 'prepareRootfs');
    const err = await t.engine
      .createContainer({ podSandboxId: podId, config: ctr('web', { mounts: [{ container_path: '/data', host_path: '/no/such' }] }) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'InvalidArgument' });
    expect(prepareRootfs).not.toHaveBeenCalled();
    await expectNothingLeft('web');
  });

  it('builds the spec as containerd: args, env, user from /etc/passwd, namespaces joined from the pause, RuntimeDefault seccomp', async () => {
    const { id } = await t.engine.createContainer({
      podSandboxId: podId,
      config: ctr('web', {
        command: [],
        args: ['-c', 'echo'],
        envs: [{ key: 'A', value: 'config' }],
        linux: {
          security_context: {
            run_as_username: 'web',
            supplemental_groups: [7],
            capabilities: { add_capabilities: ['NET_ADMIN'], drop_capabilities: ['KILL'] },
            seccomp: { profile_type: 0 },
          },
          resources: { oom_score_adj: -500, memory_limit_in_bytes: 64 << 20 },
        },
      }),
    });
    const st = await t.engine.containerStatus(id);
    const spec = st.ociSpec as ContainerOciSpec;
    const pause = (await t.engine.status(podId)).pause.pid;
    // image Entrypoint absent, config args replace image Cmd (Kubernetes rules)
    expect(spec.process.args).toEqual(['-c', 'echo']);
    expect(spec.process.env).toEqual(['HOSTNAME=p', 'PATH=/bin', 'A=config']);
    expect(spec.process.user).toEqual({ uid: 1000, gid: 1001, additionalGids: [1001, 50, 7] });
    expect(spec.process.capabilities.bounding).toContain('CAP_NET_ADMIN');
    expect(spec.process.capabilities.bounding).not.toContain('CAP_KILL');
    // never below the engine's own score (0 in the test engine): no CAP_SYS_RESOURCE
    expect(spec.process.oomScoreAdj).toBe(0);
    expect(spec.linux.resources.memory).toEqual({ limit: 64 << 20 });
    expect(spec.linux.namespaces).toEqual([
      { type: 'mount' },
      { type: 'network', path: `/proc/${pause}/ns/net` },
      { type: 'uts', path: `/proc/${pause}/ns/uts` },
      { type: 'ipc', path: `/proc/${pause}/ns/ipc` },
      { type: 'pid', path: `/proc/${pause}/ns/pid` },
    ]);
    expect(spec.linux.seccomp?.defaultAction).toBe('SCMP_ACT_ERRNO');
    expect(st.seccomp).toBe('runtime/default');
    expect(spec.mounts.map((m) => m.destination)).toEqual(
      expect.arrayContaining(['/etc/hostname', '/etc/hosts', '/etc/resolv.conf', '/dev/shm']),
    );
  });

  it('honours unconfined seccomp and refuses a privileged container in a non-privileged pod', async () => {
    const { id } = await t.engine.createContainer({
      podSandboxId: podId,
      config: ctr('u', { linux: { security_context: { seccomp: { profile_type: 1 } } } }),
    });
    const st = await t.engine.containerStatus(id);
    expect((st.ociSpec as ContainerOciSpec).linux.seccomp).toBeUndefined();
    expect(st.seccomp).toBe('unconfined');
    await expect(
      t.engine.createContainer({ podSandboxId: podId, config: ctr('priv', { linux: { security_context: { privileged: true } } }) }),
    ).rejects.toMatchObject({ code: 'InvalidArgument' });
  });
});

describe('StartContainer, StopContainer, exits', () => {
  it('starts a CREATED container once; starting again is FailedPrecondition', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    expect((await t.engine.containerStatus(id)).state).toBe('CONTAINER_RUNNING');
    await expect(t.engine.startContainer(id)).rejects.toMatchObject({ code: 'FailedPrecondition' });
  });

  it('a failed start deletes the runc container and leaves the container EXITED with StartError and 128 (containerd)', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    t.containerRuntime.startError = new PodscopeError('RuntimeError', 'exec: "sleep": executable file not found');
    await expect(t.engine.startContainer(id)).rejects.toMatchObject({ code: 'RuntimeError' });
    expect(await t.engine.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', reason: 'StartError', exitCode: 128 });
    expect(t.containerRuntime.containers.has(id)).toBe(false);
  });

  it('stop sends the stop signal, then SIGKILL to every process after the timeout', async () => {
    t.containerRuntime.ignoreSignals.add('SIGQUIT');
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    await t.engine.stopContainer(id, 1);
    expect(t.containerRuntime.kills).toEqual([
      [id, 'SIGQUIT', false],
      [id, 'SIGKILL', true],
    ]);
    expect(await t.engine.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137, reason: 'Error' });
    // stopping again is a no-op success
    await t.engine.stopContainer(id, 1);
    expect(t.containerRuntime.kills).toHaveLength(2);
  });

  // the direct kill itself (init, then every process of its cgroup; else the runtime's) is the runtime's: container-kill.test.ts
  it("stop gives the runtime's kill the recorded init (pid, start time) and cgroup, so it can signal them itself", async () => {
    t.containerRuntime.ignoreSignals.add('SIGQUIT');
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    const st = await t.engine.containerStatus(id);
    await t.engine.stopContainer(id, 1);
    expect(t.containerRuntime.kills).toEqual([
      [id, 'SIGQUIT', false],
      [id, 'SIGKILL', true],
    ]);
    const cgroupsPath = (st.ociSpec as ContainerOciSpec).linux?.cgroupsPath;
    expect(cgroupsPath).toBeTruthy();
    const { startTicks } = JSON.parse(await readFile(join(t.dir, 'state', 'containers-store', `${id}.json`), 'utf8')) as {
      startTicks?: number;
    };
    expect(t.containerRuntime.killTargets).toEqual([
      { pid: st.pid, startTicks, cgroupsPath },
      { pid: st.pid, startTicks, cgroupsPath },
    ]);
  });

  it('an exit file the shim wrote between the first look and its own exit is read (not an Unknown exit)', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    const realExitInfo = t.containerRuntime.exitInfo.bind(t.containerRuntime);
    let looks = 0;
    t.containerRuntime.exitInfo = async (bundleDir) => (looks++ === 0 ? undefined : realExitInfo(bundleDir));
    t.containerRuntime.exit(id, 3);
    await t.engine.stopContainer(id, 0);
    expect(await t.engine.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 3, reason: 'Error' });
  });

  it('stop of an unknown container is NotFound, as containerd answers', async () => {
    await expect(t.engine.stopContainer('abc', 1)).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('an exit by itself is noticed with its reason: Completed, Error, OOMKilled', async () => {
    const ids: string[] = [];
    for (const n of ['a', 'b', 'c']) {
      const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr(n) });
      await t.engine.startContainer(id);
      ids.push(id);
    }
    const c = await t.engine.containerStatus(ids[2]!);
    t.cgroups.usageByPath.set((c.ociSpec as ContainerOciSpec).linux.cgroupsPath, { oomKills: 1 });
    t.containerRuntime.exit(ids[0]!, 0);
    t.containerRuntime.exit(ids[1]!, 2);
    t.containerRuntime.exit(ids[2]!, 137);
    const list = await t.engine.listContainers({ state: 'CONTAINER_EXITED' });
    const reasons = Object.fromEntries(list.map((s) => [s.id, `${s.exitCode} ${s.reason}`]));
    expect(reasons).toEqual({ [ids[0]!]: '0 Completed', [ids[1]!]: '2 Error', [ids[2]!]: '137 OOMKilled' });
    expect(t.events.filter((e) => e.type === 'container.changed' && e.summary.state === 'CONTAINER_EXITED')).toHaveLength(3);
  });

  it('ExecSync needs a running container and returns what runc exec gave', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await expect(t.engine.execSync(id, ['true'], 1)).rejects.toMatchObject({ code: 'FailedPrecondition' });
    await t.engine.startContainer(id);
    const r = await t.engine.execSync(id, ['echo', 'out'], 1);
    expect(Buffer.from(r.stdout).toString()).toBe('out\n');
    expect(t.containerRuntime.execs.map(({ id, cmd }) => ({ id, cmd }))).toEqual([{ id, cmd: ['echo', 'out'] }]);
  });

  it("ExecSync runs the command as the container's process (user, groups, env), as containerd's ExecSync does", async () => {
    const { id } = await t.engine.createContainer({
      podSandboxId: podId,
      config: ctr('web', {
        envs: [{ key: 'WHO', value: 'web' }],
        linux: { security_context: { run_as_user: { value: 1001 }, supplemental_groups: [2002] } },
      }),
    });
    await t.engine.startContainer(id);
    await t.engine.execSync(id, ['id'], 1);
    const proc = t.containerRuntime.execs[0]!.process as {
      args: string[];
      terminal: boolean;
      user: { uid: number; additionalGids?: number[] };
      env: string[];
    };
    expect(proc.args).toEqual(['id']);
    expect(proc.terminal).toBe(false);
    expect(proc.user.uid).toBe(1001);
    expect(proc.user.additionalGids).toContain(2002);
    expect(proc.env).toContain('WHO=web');
  });

  it('UpdateContainerResources reaches a running container through runc update and is stored', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    await t.engine.updateContainerResources(id, { cpu_shares: 512, memory_limit_in_bytes: 1 << 26 });
    expect(t.containerRuntime.updates).toEqual([{ id, resources: { cpu: { shares: 512 }, memory: { limit: 1 << 26 } } }]);
    expect((await t.engine.containerStatus(id)).resources).toMatchObject({ cpu_shares: 512, memory_limit_in_bytes: 1 << 26 });
  });

  it('stats come from the container cgroup; ReopenContainerLog signals the log shim', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    expect(await t.engine.containerStats(id)).toMatchObject({ cpuUsageCoreNs: '1000000', memoryWorkingSetBytes: '2048' });
    await t.engine.reopenContainerLog(id);
    expect(t.containerRuntime.reopened).toEqual([(await t.engine.containerStatus(id)).monitorPid]);
  });
});

describe('the pod and its containers', () => {
  it('StopPodSandbox stops the containers first (SIGKILL at once); RemovePodSandbox removes them', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    await t.engine.stop(podId);
    expect(t.containerRuntime.kills).toEqual([[id, 'SIGKILL', true]]);
    expect((await t.engine.containerStatus(id)).state).toBe('CONTAINER_EXITED');
    await t.engine.remove(podId);
    expect(await t.engine.listContainers()).toEqual([]);
    await t.engine.removalsFinished();
    await expectNothingLeft('never');
  });

  it('RemoveContainer is idempotent, kills a running container and releases everything; the log file stays', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    await t.engine.removeContainer(id);
    await t.engine.removeContainer(id);
    await t.engine.removalsFinished();
    await expectNothingLeft('never');
    expect(t.events.some((e) => e.type === 'container.removed' && e.id === id)).toBe(true);
    // the kubelet's log directory is the kubelet's to clean (containerd leaves the file too)
    expect(existsSync(join(t.dir, 'logs', 'web.log'))).toBe(true);
  });

  it('RemoveContainer answers before the runtime delete and rootfs release finish: gone from List and Status, name free', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    const realDelete = t.containerRuntime.delete.bind(t.containerRuntime);
    t.containerRuntime.delete = async (cid) => {
      await gate;
      return realDelete(cid);
    };
    await t.engine.removeContainer(id);
    expect(await t.engine.listContainers()).toEqual([]);
    await expect(t.engine.containerStatus(id)).rejects.toMatchObject({ code: 'NotFound' });
    expect(t.events.some((e) => e.type === 'container.removed' && e.id === id)).toBe(true);
    expect(t.containerRuntime.containers.has(id)).toBe(true);
    const again = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    letGo();
    await t.engine.removeContainer(again.id);
    await t.engine.removalsFinished();
    await expectNothingLeft('never');
  });

  it('a removal that could not finish (a crash, a failed runtime delete) is finished by the next start-up', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    const realDelete = t.containerRuntime.delete.bind(t.containerRuntime);
    t.containerRuntime.delete = async () => {
      throw new PodscopeError('RuntimeError', 'runc delete failed');
    };
    await t.engine.removeContainer(id);
    await t.engine.removalsFinished();
    expect(t.containerRuntime.containers.has(id)).toBe(true);
    expect(readdirSync(join(t.dir, 'state', 'containers-removing'))).toEqual([`${id}.json`]);
    await t.engine.close();
    t.containerRuntime.delete = realDelete;
    const again = engineOverSameState();
    await again.start();
    try {
      expect(await again.listContainers()).toEqual([]);
      expect(readdirSync(join(t.dir, 'state', 'containers-removing'))).toEqual([]);
      await expectNothingLeft('never');
    } finally {
      await again.close();
    }
  });

  it("a record written before conmon's pid was named monitorPid (shimPid) loads with it as monitorPid", async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.startContainer(id);
    const { monitorPid } = await t.engine.containerStatus(id);
    expect(monitorPid).toBeGreaterThan(0);
    await t.engine.close();
    const file = join(t.dir, 'state', 'containers-store', `${id}.json`);
    const { monitorPid: pid, ...rest } = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...rest, shimPid: pid }));
    const again = engineOverSameState();
    await again.start();
    try {
      const st = await again.containerStatus(id);
      expect(st).toMatchObject({ state: 'CONTAINER_RUNNING', monitorPid });
      expect(st).not.toHaveProperty('shimPid');
    } finally {
      await again.close();
    }
  });

  it('a restarted engine rebuilds the store and the name reservations', async () => {
    const { id } = await t.engine.createContainer({ podSandboxId: podId, config: ctr('web') });
    await t.engine.close();
    const again = engineOverSameState();
    await again.start();
    try {
      expect((await again.containerStatus(id)).name).toBe('web_p_ns_u1_0');
      await expect(again.createContainer({ podSandboxId: podId, config: ctr('web') })).rejects.toMatchObject({ code: 'AlreadyExists' });
    } finally {
      await again.close();
    }
  });
});
