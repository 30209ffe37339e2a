/** Seccomp choice and profiles, as containerd makes them (internal/cri/sputil): the built-in allowlist, localhost files, unconfined. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import { DEFAULT_CAPABILITIES } from '../../electron/engine/runtime/oci-spec';
import { loadSeccomp, localhostProfilePath, runtimeDefaultSeccomp, seccompRequest } from '../../electron/engine/runtime/seccomp';
import { loadCrictlContainerConfig } from '../../shared/domain/crictl-container-format';
import { PodSandboxConfigSchema } from '../../shared/domain/config';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'podscope-c1-seccomp-'));
  await writeFile(join(root, 'audit.json'), JSON.stringify({ defaultAction: 'SCMP_ACT_LOG' }));
  await writeFile(join(root, 'broken.json'), JSON.stringify({ syscalls: [] }));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const allowed = (caps: readonly string[]) =>
  runtimeDefaultSeccomp(caps)
    .syscalls!.filter((r) => r.action === 'SCMP_ACT_ALLOW')
    .flatMap((r) => r.names);

describe('which profile the CRI fields ask for', () => {
  it('reads the SecurityProfile first: RuntimeDefault (also an empty one), Unconfined, Localhost', () => {
    expect(seccompRequest({ profile_type: 0, localhost_ref: '' }, 'unconfined')).toEqual({ kind: 'default' });
    expect(seccompRequest({ profile_type: 1, localhost_ref: '' }, '')).toEqual({ kind: 'unconfined' });
    expect(seccompRequest({ profile_type: 2, localhost_ref: '/p.json' }, '')).toEqual({ kind: 'localhost', ref: '/p.json' });
    expect(() => seccompRequest({ profile_type: 2, localhost_ref: '' }, '')).toThrow(/localhost_ref/);
  });

  it('falls back to the deprecated seccomp_profile_path as containerd does; nothing set means unconfined', () => {
    expect(seccompRequest(undefined, '')).toEqual({ kind: 'unconfined' });
    expect(seccompRequest(undefined, 'unconfined')).toEqual({ kind: 'unconfined' });
    expect(seccompRequest(undefined, 'runtime/default')).toEqual({ kind: 'default' });
    expect(seccompRequest(undefined, 'docker/default')).toEqual({ kind: 'default' });
    expect(seccompRequest(undefined, 'localhost/a/b.json')).toEqual({ kind: 'localhost', ref: 'a/b.json' });
    expect(() => seccompRequest(undefined, 'bogus')).toThrow(/bogus/);
  });
});

describe('the built-in RuntimeDefault profile', () => {
  it('denies by default with EPERM and allows the ordinary syscalls', () => {
    const p = runtimeDefaultSeccomp(DEFAULT_CAPABILITIES, 'x64');
    expect(p).toMatchObject({
      defaultAction: 'SCMP_ACT_ERRNO',
      defaultErrnoRet: 1,
      architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],
    });
    expect(allowed(DEFAULT_CAPABILITIES)).toEqual(expect.arrayContaining(['read', 'write', 'execve', 'futex', 'chroot', 'socket']));
  });

  it('allows mount, unshare and setns only with CAP_SYS_ADMIN, and ptrace only with CAP_SYS_PTRACE', () => {
    expect(allowed(DEFAULT_CAPABILITIES)).not.toEqual(expect.arrayContaining(['mount']));
    expect(allowed(DEFAULT_CAPABILITIES)).not.toContain('ptrace');
    expect(allowed([...DEFAULT_CAPABILITIES, 'CAP_SYS_ADMIN'])).toEqual(expect.arrayContaining(['mount', 'unshare', 'setns', 'clone3']));
    expect(allowed([...DEFAULT_CAPABILITIES, 'CAP_SYS_PTRACE'])).toContain('ptrace');
    // clone3 answers ENOSYS without CAP_SYS_ADMIN so libc falls back to clone, whose flags the filter can check
    expect(runtimeDefaultSeccomp(DEFAULT_CAPABILITIES).syscalls!.find((r) => r.names.includes('clone3'))).toMatchObject({
      action: 'SCMP_ACT_ERRNO',
      errnoRet: 38,
    });
  });
});

describe('loading', () => {
  it('gives privileged processes no seccomp whatever was asked', async () => {
    expect(
      await loadSeccomp({
        profile: { profile_type: 0, localhost_ref: '' },
        legacyPath: '',
        privileged: true,
        capabilities: [],
        profileRoot: root,
      }),
    ).toEqual({ applied: 'unconfined' });
  });

  it('loads a localhost profile from the root and refuses refs that leave it or files that are not profiles', async () => {
    const c = await loadSeccomp({
      profile: { profile_type: 2, localhost_ref: 'audit.json' },
      legacyPath: '',
      privileged: false,
      capabilities: [],
      profileRoot: root,
    });
    expect(c).toEqual({ applied: `localhost/${join(root, 'audit.json')}`, spec: { defaultAction: 'SCMP_ACT_LOG' } });
    expect(() => localhostProfilePath('../etc/passwd', root)).toThrow(/leaves the profile root/);
    await expect(
      loadSeccomp({
        profile: { profile_type: 2, localhost_ref: 'broken.json' },
        legacyPath: '',
        privileged: false,
        capabilities: [],
        profileRoot: root,
      }),
    ).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(
      loadSeccomp({
        profile: { profile_type: 2, localhost_ref: 'none.json' },
        legacyPath: '',
        privileged: false,
        capabilities: [],
        profileRoot: root,
      }),
    ).rejects.toMatchObject({ code: 'InvalidArgument' });
  });

  it('puts the loaded profile into the pause spec (containerd gives the pause seccomp too)', async () => {
    const config = PodSandboxConfigSchema.parse({
      metadata: { name: 'p', namespace: 'n', uid: 'u' },
      hostname: 'p',
      linux: { security_context: { seccomp: { profile_type: 0 } } },
    });
    const seccomp = await loadSeccomp({
      profile: config.linux?.security_context?.seccomp,
      legacyPath: '',
      privileged: false,
      capabilities: DEFAULT_CAPABILITIES,
      profileRoot: root,
    });
    const spec = buildPauseSpec({
      id: 'x',
      config,
      netnsPath: '/n',
      rootfsPath: '/r',
      resolvConfPath: '/c',
      shmPath: '/s',
      engineOomScoreAdj: 0,
      seccomp,
    });
    expect(spec.linux.seccomp?.defaultAction).toBe('SCMP_ACT_ERRNO');
  });
});

describe("crictl's container-config files", () => {
  it('reads snake_case keys, numeric enums (names accepted with a warning) and names unknown keys', () => {
    const { config, warnings } = loadCrictlContainerConfig(
      `metadata: {name: web}
image: {image: busybox}
command: [httpd, -f]
log_path: web.log
mounts: [{container_path: /data, host_path: /tmp, propagation: 1}]
linux: {security_context: {seccomp: {profile_type: RuntimeDefault}, run_as_user: {value: 1000}}}
workingDir: /x
`,
      'ctr.yaml',
    );
    expect(config).toMatchObject({
      metadata: { name: 'web', attempt: 0 },
      image: { image: 'busybox' },
      command: ['httpd', '-f'],
      log_path: 'web.log',
    });
    expect(config.mounts[0]).toMatchObject({ propagation: 1, readonly: false });
    expect(config.linux?.security_context).toMatchObject({ seccomp: { profile_type: 0 }, run_as_user: { value: 1000 } });
    expect(warnings.join('\n')).toMatch(/profile_type: "RuntimeDefault" is an enum name/);
    expect(warnings.join('\n')).toMatch(/workingDir: unknown key, ignored as crictl would ignore it \(did you mean "working_dir"/);
    expect(() => loadCrictlContainerConfig('image: {image: x}', 'c.json')).toThrow(/metadata is required/);
  });
});
