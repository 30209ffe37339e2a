import { describe, expect, it } from 'vitest';
import { PodSandboxConfigSchema, type PodSandboxConfigInput } from '../../shared/domain/config';
import { PodscopeError } from '../../shared/domain/errors';
import {
  DEFAULT_CAPABILITIES,
  MASKED_PATHS,
  PAUSE_IMAGE_NAME,
  READONLY_PATHS,
  buildPauseSpec,
  type PauseSpecInput,
} from '../../electron/engine/runtime/oci-spec';

const ID = 'a'.repeat(64);
const NETNS = '/var/run/netns/cni-01234567-89ab-cdef-0123-456789abcdef';
const SHM = `/run/podscope/sandboxes/${ID}/shm`;
const RESOLV = `/var/lib/podscope/sandboxes/${ID}/resolv.conf`;
const ROOTFS = '/var/lib/podscope/pause/rootfs';
const BIND = ['rbind', 'ro', 'nosuid', 'nodev', 'noexec'];

type ConfigInput = Omit<PodSandboxConfigInput, 'metadata'>;
type Spec = ReturnType<typeof buildPauseSpec>;
interface VariationCase {
  name: string;
  config: ConfigInput;
  over?: Partial<PauseSpecInput>;
  check: (s: Spec) => void;
}
interface RejectionCase {
  name: string;
  config: ConfigInput;
  over?: Partial<PauseSpecInput>;
  message: RegExp;
}

function input(config: ConfigInput = {}, over: Partial<PauseSpecInput> = {}): PauseSpecInput {
  return {
    id: ID,
    config: PodSandboxConfigSchema.parse({ metadata: { name: 'web', namespace: 'default', uid: 'uid-1', attempt: 1 }, ...config }),
    netnsPath: NETNS,
    rootfsPath: ROOTFS,
    resolvConfPath: RESOLV,
    shmPath: SHM,
    engineOomScoreAdj: 0,
    ...over,
  };
}

const hostNetwork: ConfigInput = { linux: { security_context: { namespace_options: { network: 2 } } } };
const hostIpc: ConfigInput = { linux: { security_context: { namespace_options: { ipc: 2 } } } };

describe('buildPauseSpec: a plain pod (docs/semantics.md#pause-oci-spec)', () => {
  const spec = buildPauseSpec(input({ hostname: 'web-0', log_directory: '/var/log/pods/x' }));

  it('runs /pause read-only, as the pause image user, with the 14 default capabilities and no new privileges', () => {
    expect(spec.root).toEqual({ path: ROOTFS, readonly: true });
    expect(spec.process.args).toEqual(['/pause']);
    expect(spec.process.cwd).toBe('/');
    expect(spec.process.env).toEqual(['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']);
    expect(spec.process.terminal).toBe(false);
    expect(spec.process.user).toEqual({ uid: 65535, gid: 65535, additionalGids: [65535] });
    expect(DEFAULT_CAPABILITIES).toHaveLength(14);
    expect(spec.process.capabilities).toEqual({
      bounding: DEFAULT_CAPABILITIES,
      effective: DEFAULT_CAPABILITIES,
      permitted: DEFAULT_CAPABILITIES,
    });
    expect(spec.process.noNewPrivileges).toBe(true);
    expect(spec.hostname).toBe('web-0');
  });

  it('has every namespace of its own, joining the pinned netns', () => {
    expect(spec.linux.namespaces).toEqual([
      { type: 'pid' },
      { type: 'ipc' },
      { type: 'uts' },
      { type: 'mount' },
      { type: 'network', path: NETNS },
    ]);
  });

  it('mounts the defaults without /run, then binds shm and resolv.conf read-only', () => {
    expect(spec.mounts).toEqual([
      { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
      {
        destination: '/dev/pts',
        type: 'devpts',
        source: 'devpts',
        options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
      },
      { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
      { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
      { destination: '/dev/shm', type: 'bind', source: SHM, options: BIND },
      { destination: '/etc/resolv.conf', type: 'bind', source: RESOLV, options: BIND },
    ]);
  });

  it('sets the linux section: sysctls, cpu shares 2, deny-all devices, /podscope/<id>, masked and read-only paths', () => {
    expect(spec.linux.sysctl).toEqual({ 'net.ipv4.ip_unprivileged_port_start': '0', 'net.ipv4.ping_group_range': '0 2147483647' });
    expect(spec.linux.resources).toEqual({ devices: [{ allow: false, access: 'rwm' }], cpu: { shares: 2 } });
    expect(spec.linux.cgroupsPath).toBe(`/podscope/${ID}`);
    expect(spec.linux.maskedPaths).toEqual(MASKED_PATHS);
    expect(spec.linux.maskedPaths).toHaveLength(11);
    expect(spec.linux.readonlyPaths).toEqual(READONLY_PATHS);
  });

  it('carries the CRI annotations', () => {
    expect(spec.annotations).toEqual({
      'io.kubernetes.cri.container-type': 'sandbox',
      'io.kubernetes.cri.sandbox-id': ID,
      'io.kubernetes.cri.sandbox-namespace': 'default',
      'io.kubernetes.cri.sandbox-uid': 'uid-1',
      'io.kubernetes.cri.sandbox-name': 'web',
      'io.kubernetes.cri.sandbox-log-directory': '/var/log/pods/x',
      'io.kubernetes.cri.podsandbox.image-name': PAUSE_IMAGE_NAME,
    });
  });

  it('has no rlimits, seccomp, apparmor or hooks (runc must not need CAP_SYS_RESOURCE or raise hard limits)', () => {
    const json = JSON.parse(JSON.stringify(spec)) as { process: Record<string, unknown>; linux: Record<string, unknown> } & Record<
      string,
      unknown
    >;
    expect(json.process.rlimits).toBeUndefined();
    expect(json.process.apparmorProfile).toBeUndefined();
    expect(json.linux.seccomp).toBeUndefined();
    expect(json.hooks).toBeUndefined();
  });
});

describe('buildPauseSpec: variations', () => {
  it.each<VariationCase>([
    {
      name: 'host network drops network and uts, and the unprivileged sysctls',
      config: hostNetwork,
      over: { netnsPath: undefined },
      check: (s: Spec) => {
        expect(s.linux.namespaces).toEqual([{ type: 'pid' }, { type: 'ipc' }, { type: 'mount' }]);
        expect(s.linux.sysctl).toEqual({});
        expect(s.hostname).toBe('');
      },
    },
    {
      name: 'host IPC drops ipc and binds the host /dev/shm',
      config: hostIpc,
      check: (s: Spec) => {
        expect(s.linux.namespaces.map((n) => n.type)).toEqual(['pid', 'uts', 'mount', 'network']);
        expect(s.mounts.find((m) => m.destination === '/dev/shm')?.source).toBe('/dev/shm');
      },
    },
    {
      name: 'host PID drops pid',
      config: { linux: { security_context: { namespace_options: { pid: 2 } } } },
      check: (s: Spec) => expect(s.linux.namespaces.map((n) => n.type)).toEqual(['ipc', 'uts', 'mount', 'network']),
    },
    {
      name: 'cgroup parent becomes <parent>/<id>',
      config: { linux: { cgroup_parent: '/kubepods/besteffort/pod123' } },
      check: (s: Spec) => expect(s.linux.cgroupsPath).toBe(`/kubepods/besteffort/pod123/${ID}`),
    },
    {
      name: 'a systemd-looking parent stays a plain cgroupfs path',
      config: { linux: { cgroup_parent: '/test.slice/' } },
      check: (s: Spec) => expect(s.linux.cgroupsPath).toBe(`/test.slice/${ID}`),
    },
    {
      name: 'dns_config does not change the spec: resolv.conf is always the per-sandbox bind',
      config: { dns_config: { servers: ['10.10.10.10'], searches: ['google.com'], options: ['ndots:8'] } },
      check: (s: Spec) => expect(s.mounts.at(-1)).toEqual({ destination: '/etc/resolv.conf', type: 'bind', source: RESOLV, options: BIND }),
    },
    {
      name: 'user sysctls are added and override the unprivileged defaults',
      config: {
        linux: {
          sysctls: {
            'net.core.somaxconn': '1024',
            'net.ipv4.ip_unprivileged_port_start': '80',
            'kernel.shm_rmid_forced': '1',
            'fs.mqueue.msg_max': '100',
            'kernel.domainname': 'example',
          },
        },
      },
      check: (s: Spec) =>
        expect(s.linux.sysctl).toEqual({
          'net.ipv4.ip_unprivileged_port_start': '80',
          'net.ipv4.ping_group_range': '0 2147483647',
          'net.core.somaxconn': '1024',
          'kernel.shm_rmid_forced': '1',
          'fs.mqueue.msg_max': '100',
          'kernel.domainname': 'example',
        }),
    },
    {
      name: 'host network keeps only the user sysctls',
      config: { linux: { security_context: { namespace_options: { network: 2 } }, sysctls: { 'kernel.shm_rmid_forced': '1' } } },
      over: { netnsPath: undefined },
      check: (s: Spec) => expect(s.linux.sysctl).toEqual({ 'kernel.shm_rmid_forced': '1' }),
    },
    {
      name: 'privileged makes /sys writable',
      config: { linux: { security_context: { privileged: true } } },
      check: (s: Spec) => expect(s.mounts.find((m) => m.destination === '/sys')?.options).toEqual(['nosuid', 'noexec', 'nodev', 'rw']),
    },
    {
      name: 'run_as_user alone gets group 0',
      config: { linux: { security_context: { run_as_user: { value: 1000 } } } },
      check: (s: Spec) => expect(s.process.user).toEqual({ uid: 1000, gid: 0, additionalGids: [0] }),
    },
    {
      name: 'run_as_user + run_as_group + supplemental groups',
      config: {
        linux: { security_context: { run_as_user: { value: 0 }, run_as_group: { value: 2000 }, supplemental_groups: [3000, 2000] } },
      },
      check: (s: Spec) => expect(s.process.user).toEqual({ uid: 0, gid: 2000, additionalGids: [2000, 3000] }),
    },
  ])('$name', ({ config, over, check }) => {
    check(buildPauseSpec(input(config, over)));
  });

  it.each([
    { engine: 0, expected: 0 },
    { engine: -500, expected: -500 },
    { engine: -998, expected: -998 },
    { engine: -1000, expected: -998 },
    { engine: 300, expected: 300 },
  ])('oomScoreAdj with the engine at $engine is $expected (never below the engine, never below -998)', ({ engine, expected }) => {
    expect(buildPauseSpec(input({}, { engineOomScoreAdj: engine })).process.oomScoreAdj).toBe(expected);
  });
});

describe('buildPauseSpec: configurations runc would reject are InvalidArgument', () => {
  it.each<RejectionCase>([
    {
      name: 'hostname with host network',
      config: { ...hostNetwork, hostname: 'h' },
      over: { netnsPath: undefined },
      message: /hostname "h".*host-network.*UTS/,
    },
    {
      name: 'net.* sysctl with host network',
      config: { linux: { security_context: { namespace_options: { network: 2 } }, sysctls: { 'net.core.somaxconn': '1' } } },
      over: { netnsPath: undefined },
      message: /net\.core\.somaxconn.*host network/,
    },
    {
      name: 'IPC sysctl with host IPC',
      config: { linux: { ...hostIpc.linux, sysctls: { 'kernel.msgmax': '1' } } },
      message: /kernel\.msgmax.*host IPC/,
    },
    {
      name: 'fs.mqueue.* with host IPC',
      config: { linux: { ...hostIpc.linux, sysctls: { 'fs.mqueue.msg_max': '1' } } },
      message: /fs\.mqueue\.msg_max.*host IPC/,
    },
    { name: 'kernel.hostname', config: { linux: { sysctls: { 'kernel.hostname': 'x' } } }, message: /kernel\.hostname.*hostname field/ },
    {
      name: 'kernel.domainname with host network',
      config: { linux: { security_context: { namespace_options: { network: 2 } }, sysctls: { 'kernel.domainname': 'x' } } },
      over: { netnsPath: undefined },
      message: /kernel\.domainname.*UTS/,
    },
    {
      name: 'a non-namespaced sysctl',
      config: { linux: { sysctls: { 'kernel.panic': '1' } } },
      message: /kernel\.panic.*not in a separate kernel namespace/,
    },
    {
      name: 'run_as_group without run_as_user',
      config: { linux: { security_context: { run_as_group: { value: 5 } } } },
      message: /user group "5" is specified without user/,
    },
    { name: 'a negative run_as_user', config: { linux: { security_context: { run_as_user: { value: -1 } } } }, message: /run_as_user/ },
    { name: 'no netns for a pod network', config: {}, over: { netnsPath: undefined }, message: /netnsPath/ },
    { name: 'a hostname over 64 bytes (sethostname EINVAL)', config: { hostname: 'h'.repeat(65) }, message: /longer than 64 bytes/ },
    {
      name: 'a seccomp profile path containerd would not understand',
      config: { linux: { security_context: { seccomp_profile_path: 'bogus' } } },
      message: /seccomp_profile_path "bogus": expected/,
    },
  ])('$name', ({ config, over, message }) => {
    let error: unknown;
    try {
      buildPauseSpec(input(config, over));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PodscopeError);
    expect((error as PodscopeError).code).toBe('InvalidArgument');
    expect((error as PodscopeError).message).toMatch(message);
  });
});
