import { describe, expect, it } from 'vitest';
import {
  containerRuntimeRoot,
  hidingShell,
  hybridCgroupNeedsHiding,
  mountIsShared,
  ociRuntimeBinary,
  probeRuntimeHandlers,
  resolveRuntimeHandler,
} from '../../electron/engine/runtime/oci-runtime';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { hasCode } from '../../shared/domain/errors';

function result(r: Partial<ExecResult>): ExecResult {
  return { command: '', exitCode: 0, signal: null, stdout: '', stderr: '', durationMs: 1, timedOut: false, canceled: false, ...r };
}

describe('runtime_handler', () => {
  it('"" and runc are runc, crun is crun', () => {
    expect(resolveRuntimeHandler('')).toBe('runc');
    expect(resolveRuntimeHandler(undefined)).toBe('runc');
    expect(resolveRuntimeHandler('runc')).toBe('runc');
    expect(resolveRuntimeHandler('crun')).toBe('crun');
  });

  it('an unknown name is InvalidArgument naming the field, the known handlers and the default', () => {
    const err = (() => {
      try {
        return resolveRuntimeHandler('kata');
      } catch (e) {
        return e;
      }
    })();
    expect(hasCode(err, 'InvalidArgument')).toBe(true);
    expect((err as Error).message).toBe(
      'no runtime for "kata" is configured (runtime_handler: known handlers are runc, crun; empty means runc)',
    );
  });
});

describe('the runtime binaries', () => {
  const paths = { runcPath: '/usr/sbin/runc', crunPath: '/opt/crun' };

  it('each handler has its own root under <runDir>/containers, runc where it always was', () => {
    expect(containerRuntimeRoot('/run/podscope', 'runc')).toBe('/run/podscope/containers/runc');
    expect(containerRuntimeRoot('/run/podscope', 'crun')).toBe('/run/podscope/containers/crun');
  });

  it("reads each runtime's words for an unknown id and a finished process", () => {
    const runc = ociRuntimeBinary('runc', paths);
    const crun = ociRuntimeBinary('crun', paths);
    expect(runc.path).toBe('/usr/sbin/runc');
    expect(crun.path).toBe('/opt/crun');
    expect(runc.doesNotExist.test('container does not exist')).toBe(true);
    expect(crun.doesNotExist.test('error opening file `/run/x/containers/crun/abc/status`: No such file or directory')).toBe(true);
    // a missing file elsewhere (a bundle, a rootfs) is a real failure, not "no such container"
    expect(crun.doesNotExist.test('error opening file `/bundle/config.json`: No such file or directory')).toBe(false);
    expect(crun.notRunning.test('kill container: No such process')).toBe(true);
    expect(runc.updateFromStdin).toBe(true);
    expect(crun.updateFromStdin).toBe(false);
  });
});

describe('crun on a hybrid cgroup host', () => {
  const mounts = (unifiedType: string) =>
    [
      'tmpfs /sys/fs/cgroup tmpfs rw,relatime 0 0',
      'cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0',
      `cgroup2 /sys/fs/cgroup/unified ${unifiedType} rw 0 0`,
    ].join('\n');
  const reader = (files: Record<string, string>) => async (p: string) => {
    if (p in files) return files[p]!;
    throw new Error(`ENOENT ${p}`);
  };

  it('hides the cgroup2 only when it is mounted beside v1 and lists a controller', async () => {
    expect(
      await hybridCgroupNeedsHiding(
        reader({ '/proc/self/mounts': mounts('cgroup2'), '/sys/fs/cgroup/unified/cgroup.controllers': 'hugetlb\n' }),
      ),
    ).toBe(true);
    expect(
      await hybridCgroupNeedsHiding(reader({ '/proc/self/mounts': mounts('cgroup2'), '/sys/fs/cgroup/unified/cgroup.controllers': '\n' })),
    ).toBe(false);
    expect(await hybridCgroupNeedsHiding(reader({ '/proc/self/mounts': 'cgroup2 /sys/fs/cgroup cgroup2 rw 0 0' }))).toBe(false);
  });

  it('makes the cgroup2 private in the namespace only when it is a shared mount (a tmpfs over it would reach the host)', async () => {
    const info = (optional: string) =>
      [
        '30 1 0:27 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755',
        `41 30 0:38 / /sys/fs/cgroup/unified rw,relatime ${optional}- cgroup2 cgroup2 rw`,
      ].join('\n');
    const shared = (optional: string) => mountIsShared('/sys/fs/cgroup/unified', reader({ '/proc/self/mountinfo': info(optional) }));
    expect(await shared('shared:9 ')).toBe(true);
    expect(await shared('master:4 ')).toBe(false);
    expect(await shared('')).toBe(false);
    // unreadable or not there: the safe answer
    expect(await mountIsShared('/sys/fs/cgroup/unified', reader({}))).toBe(true);
  });
});

describe('the shell that hides the cgroup2', () => {
  it("is busybox's (static, mount built in) where it is installed, else the system sh", async () => {
    expect(await hidingShell(async (p) => p === '/bin/busybox')).toEqual(['/bin/busybox', 'sh']);
    expect(await hidingShell(async (p) => p === '/usr/bin/busybox' || p === '/bin/busybox')).toEqual(['/usr/bin/busybox', 'sh']);
    expect(await hidingShell(async () => false)).toEqual(['sh']);
  });
});

describe('probing the handlers', () => {
  it('reports each version, the default, and for a missing binary the package to install', async () => {
    const runner: ProcessRunner = {
      run: async (req: ExecRequest) => {
        if (req.file === 'runc') return result({ stdout: 'runc version 1.1.5+ds1\ncommit: x\n' });
        throw Object.assign(new Error(`spawn ${req.file} ENOENT`), { code: 'ENOENT' });
      },
    };
    const handlers = await probeRuntimeHandlers({ runcPath: 'runc', crunPath: 'crun' }, runner);
    expect(handlers).toEqual([
      { name: 'runc', path: 'runc', present: true, version: 'runc version 1.1.5+ds1', default: true },
      {
        name: 'crun',
        path: 'crun',
        present: false,
        default: false,
        problem: 'crun not found or not working: install crun (Debian package crun)',
      },
    ]);
  });
});
