/**
 * RunPodSandbox refuses, before it acquires anything, the input that used to fail only after the netns and an IP
 * existed (found by fuzzing the CRI server: answered UNKNOWN instead of INVALID_ARGUMENT). Each case is an
 * InvalidArgument naming the field, and the fakes saw no netns, CNI, runc or file call.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_OPTIONS } from '../../electron/engine/common/options';
import { buildPauseSpec } from '../../electron/engine/runtime/oci-spec';
import { checkSysctl } from '../../electron/engine/runtime/sysctl-rules';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { buildTestEngine } from '../../testkit/fakes/test-engine';
import { createFakeCni, FAKE_NETWORKS, type FakeCni, type FakeNetwork } from '../../testkit/fakes/fake-cni';
import { FakeSandboxFiles } from '../../testkit/fakes/fake-files';
import { fakeLiveReader } from '../../testkit/fakes/fake-kernel-commands';
import { FakeNetnsManager } from '../../testkit/fakes/fake-netns';
import { FakePauseRuntime } from '../../testkit/fakes/fake-runtime';
import { runConfigIssues, sysctlNameProblem } from '../../shared/domain/config-checks';
import { PodSandboxConfigSchema, type PodSandboxConfigInput } from '../../shared/domain/config';
import { ipFamilyOf } from '../../shared/domain/ip';
import { hostIpFamilyProblems, networkFamilies } from '../../shared/domain/portmap';
import { PodscopeError } from '../../shared/domain/errors';

let dir: string;
let netns: FakeNetnsManager;
let cni: FakeCni;
let runtime: FakePauseRuntime;
let files: FakeSandboxFiles;
let engine: SandboxEngine;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-r3-unit-'));
  netns = new FakeNetnsManager();
  cni = await createFakeCni({ dir });
  runtime = new FakePauseRuntime();
  files = new FakeSandboxFiles();
  engine = buildTestEngine({
    options: { ...DEFAULT_ENGINE_OPTIONS, stateDir: join(dir, 'state'), runDir: join(dir, 'run') },
    netns,
    cni,
    runtime,
    files,
    liveReader: fakeLiveReader(),
    buildPauseSpec,
    engineOomScoreAdj: 0,
    cleanupTimeoutMs: 5000,
    processAlive: async () => true,
  });
  await engine.start();
});

afterEach(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

const base = { metadata: { name: 'web', namespace: 'ns', uid: 'u' } };
const hostNet = { security_context: { namespace_options: { network: 2 } } };

/** [what, config, the field the error must name] */
const cases: Array<[string, PodSandboxConfigInput, string]> = [
  ['NUL in metadata.name (CNI_ARGS: spawn refuses it)', { metadata: { ...base.metadata, name: 'a\u0000b' } }, 'metadata.name'],
  ['a newline in metadata.namespace', { metadata: { ...base.metadata, namespace: 'a\nb' } }, 'metadata.namespace'],
  ['a control byte in metadata.uid', { metadata: { ...base.metadata, uid: 'u\u0007' } }, 'metadata.uid'],
  ['NUL in a label value', { ...base, labels: { app: 'x\u0000' } }, 'labels.app'],
  ['NUL in an annotation value', { ...base, annotations: { 'example.com/a': '\u0000' } }, 'annotations["example.com/a"]'],
  ['a control byte in an annotation key', { ...base, annotations: { 'a\u0001': 'x' } }, 'annotations["a\\u0001"]'],
  ['a newline in the hostname', { ...base, hostname: 'a\nb' }, 'hostname'],
  [
    'a newline in a DNS server (a second resolv.conf line)',
    { ...base, dns_config: { servers: ['1.1.1.1\nnameserver 6.6.6.6'] } },
    'dns_config.servers[0]',
  ],
  ['a control byte in a DNS search', { ...base, dns_config: { searches: ['a\u0000'] } }, 'dns_config.searches[0]'],
  ['a control byte in log_directory', { ...base, log_directory: '/var/log/\u0000' }, 'log_directory'],
  ['a control byte in cgroup_parent', { ...base, linux: { cgroup_parent: '/a\nb' } }, 'linux.cgroup_parent'],
  [
    'a host_ip that is not an IP',
    { ...base, port_mappings: [{ container_port: 80, host_port: 8080, host_ip: 'localhost' }] },
    'port_mappings[0].host_ip',
  ],
  [
    'a host_ip with a zone',
    {
      ...base,
      port_mappings: [
        { container_port: 80, host_port: 8080 },
        { container_port: 80, host_port: 8081, host_ip: 'fe80::1%eth0' },
      ],
    },
    'port_mappings[1].host_ip',
  ],
  [
    'a host_ip with leading zeros (Go refuses them)',
    { ...base, port_mappings: [{ container_port: 80, host_port: 8080, host_ip: '010.0.0.1' }] },
    'port_mappings[0].host_ip',
  ],
  ['sysctl "net"', { ...base, linux: { sysctls: { net: '1' } } }, 'linux.sysctls.net'],
  ['sysctl "net."', { ...base, linux: { sysctls: { 'net.': '1' } } }, 'linux.sysctls["net."]'],
  ['sysctl "net..ipv4"', { ...base, linux: { sysctls: { 'net..ipv4': '1' } } }, 'linux.sysctls["net..ipv4"]'],
  [
    'sysctl ".net.ipv4.ip_forward"',
    { ...base, linux: { sysctls: { '.net.ipv4.ip_forward': '1' } } },
    'linux.sysctls[".net.ipv4.ip_forward"]',
  ],
  ['sysctl "fs.mqueue."', { ...base, linux: { sysctls: { 'fs.mqueue.': '1' } } }, 'linux.sysctls["fs.mqueue."]'],
  [
    'a sysctl name with NUL',
    { ...base, linux: { sysctls: { 'net.ipv4.ip_forward\u0000': '1' } } },
    'linux.sysctls["net.ipv4.ip_forward\\u0000"]',
  ],
  ['an empty sysctl value', { ...base, linux: { sysctls: { 'net.ipv4.ip_forward': '' } } }, 'linux.sysctls["net.ipv4.ip_forward"]'],
  [
    'a sysctl value with a newline',
    { ...base, linux: { sysctls: { 'net.ipv4.ip_forward': '1\n0' } } },
    'linux.sysctls["net.ipv4.ip_forward"]',
  ],
  ['a sysctl value with NUL', { ...base, linux: { sysctls: { 'net.core.somaxconn': '1\u0000' } } }, 'linux.sysctls["net.core.somaxconn"]'],
  // runc's namespace rules (libcontainer/configs/validate): these were refused before, now naming the field too
  ['a non-namespaced sysctl', { ...base, linux: { sysctls: { 'kernel.panic': '1' } } }, 'linux.sysctls["kernel.panic"]'],
  [
    'a net.* sysctl on the host network',
    { ...base, linux: { ...hostNet, sysctls: { 'net.core.somaxconn': '1' } } },
    'linux.sysctls["net.core.somaxconn"]',
  ],
];

describe('RunPodSandbox validates before acquiring', () => {
  it.each(cases)('%s: InvalidArgument naming the field, nothing acquired', async (_what, config, field) => {
    const e = await engine.run({ config }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(PodscopeError);
    expect((e as PodscopeError).code).toBe('InvalidArgument');
    expect((e as PodscopeError).message).toContain(`${field}:`);
    expect(netns.calls.filter((c) => c.op === 'create')).toEqual([]);
    expect(cni.calls.filter((c) => c.op === 'setup' || c.op === 'remove')).toEqual([]);
    expect(runtime.calls.filter((c) => c.op === 'start')).toEqual([]);
    expect(files.prepared.size).toBe(0);
    expect(await engine.list()).toEqual([]);
    // the name was not reserved: the same pod with the field fixed runs
    expect((await engine.run({ config: base })).id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('what containerd passes through still runs: tabs/newlines in annotation values, any label text, dropped mappings with any host_ip', async () => {
    const config = {
      ...base,
      hostname: 'web-0',
      labels: { app: 'web', note: 'ünïcödé 😀' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{\n\t"a": 1\n}\n' },
      port_mappings: [
        { container_port: 80, host_port: 0, host_ip: 'not-an-ip' }, // host_port <= 0 never reaches CNI (containerd toCNIPortMappings)
        { container_port: 80, host_port: 8080, host_ip: '127.0.0.1' },
        { container_port: 443, host_port: 8443, host_ip: '::1' },
        { container_port: 53, host_port: 5353, host_ip: '::ffff:10.0.0.1', protocol: 1 },
      ],
      dns_config: { servers: ['10.96.0.10'], searches: ['ns.svc.cluster.local'], options: ['ndots:5'] },
      linux: {
        sysctls: {
          'net.ipv4.ip_unprivileged_port_start': '80',
          'net.ipv4.ping_group_range': '0\t2147483647',
          'kernel.shm_rmid_forced': '1',
          'fs.mqueue.msg_max': '100',
        },
      },
    };
    const { id } = await engine.run({ config });
    expect((await engine.status(id)).state).toBe('SANDBOX_READY');
  });
});

describe('the shared checks', () => {
  it('sysctl names: dotted or slashed paths with at least two non-empty segments', () => {
    for (const ok of ['net.ipv4.ip_forward', 'net/ipv4/ip_forward', 'net.ipv4.conf.eth0-1.rp_filter', 'kernel.shm_rmid_forced'])
      expect(sysctlNameProblem(ok), ok).toBeUndefined();
    for (const bad of ['', 'net', 'net.', '.net', 'net..a', 'net./a', 'net/', 'net.a b', 'net.\u0000', 'net.a\n'])
      expect(sysctlNameProblem(bad), JSON.stringify(bad)).toBeDefined();
  });

  it('checkSysctl refuses a malformed name itself, for callers that skip the schema', () => {
    const own = { network: true, ipc: true, uts: true };
    expect(() => checkSysctl('net.', own)).toThrow(/linux\.sysctls\["net\."\]: a sysctl name must not have empty segments/);
    expect(() => checkSysctl('net.ipv4.ip_forward', own)).not.toThrow();
  });

  it('host IPs follow Go net.ParseIP: no zone, no leading zeros, no prefix, no brackets', () => {
    for (const [ip, fam] of [
      ['127.0.0.1', 4],
      ['::1', 6],
      ['::ffff:1.2.3.4', 6],
      ['2001:db8::1', 6],
      ['1:2:3:4:5:6:7:8', 6],
    ] as const)
      expect(ipFamilyOf(ip), ip).toBe(fam);
    for (const bad of [
      '',
      'localhost',
      '01.2.3.4',
      '1.2.3',
      '256.0.0.1',
      'fe80::1%eth0',
      '10.0.0.1/24',
      '[::1]',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      ' 1.2.3.4',
    ])
      expect(ipFamilyOf(bad), bad).toBe(0);
  });

  it('a config from another runtime with such values still decodes (the checks are for running only)', () => {
    const config = { ...base, linux: { sysctls: { 'net.': '' } } };
    expect(PodSandboxConfigSchema.safeParse(config).success).toBe(true);
    expect(runConfigIssues(PodSandboxConfigSchema.parse(config)).map((i) => i.path)).toEqual([['linux', 'sysctls', 'net.']]);
  });
});

describe('host_ip of a family the pod network cannot give', () => {
  const v4only: FakeNetwork[] = [
    FAKE_NETWORKS[0]!,
    {
      ...FAKE_NETWORKS[1]!,
      plugins: [
        { type: 'bridge', bridge: 'cni0', ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.0.0/16' }]] } },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
  ];
  /** the views the real manager loads from these networks' conflists */
  const viewsOf = async (networks: FakeNetwork[]) => {
    const d = await mkdtemp(join(tmpdir(), 'podscope-r3-views-'));
    try {
      const c = await createFakeCni({ dir: d, networks });
      return (await c.load()).networks;
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  };
  const v4onlyView = () => viewsOf(v4only);

  it('is refused before anything is acquired when the conflist says for certain (host-local ranges)', async () => {
    await engine.close();
    cni = await createFakeCni({ dir: join(dir, 'v4only'), networks: v4only });
    engine = buildTestEngine({
      options: { ...DEFAULT_ENGINE_OPTIONS, stateDir: join(dir, 'state2'), runDir: join(dir, 'run2') },
      netns,
      cni,
      runtime,
      files,
      liveReader: fakeLiveReader(),
      buildPauseSpec,
      engineOomScoreAdj: 0,
      cleanupTimeoutMs: 5000,
      processAlive: async () => true,
    });
    await engine.start();
    const config = {
      ...base,
      port_mappings: [
        { container_port: 80, host_port: 8080, host_ip: '127.0.0.1' },
        { container_port: 80, host_port: 8081, host_ip: '::1' },
      ],
    };
    await expect(engine.run({ config })).rejects.toMatchObject({
      code: 'InvalidArgument',
      message: expect.stringContaining('port_mappings[1].host_ip: ::1 is an IPv6 address'),
    });
    expect(netns.calls.filter((c) => c.op === 'create')).toEqual([]);
    expect(cni.calls.filter((c) => c.op === 'setup')).toEqual([]);
    // an IPv4-mapped address is IPv4 for portmap (Go To4()), and a dropped mapping (host_port 0) is never checked
    const ok = {
      ...base,
      port_mappings: [
        { container_port: 80, host_port: 8080, host_ip: '::ffff:127.0.0.1' },
        { container_port: 80, host_port: 0, host_ip: '::1' },
      ],
    };
    expect((await engine.run({ config: ok })).id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is not judged when the families are not known for certain', async () => {
    const m = [{ protocol: 0, container_port: 80, host_port: 8080, host_ip: '::1' }];
    expect(hostIpFamilyProblems(m, await v4onlyView())).toHaveLength(1);
    // host-local without ranges; dhcp; no portmap at all
    const noRanges = v4only.map((n) =>
      n.ifName === 'lo' ? n : { ...n, plugins: n.plugins.map((p) => (p.type === 'bridge' ? { ...p, ipam: { type: 'host-local' } } : p)) },
    );
    expect(hostIpFamilyProblems(m, await viewsOf(noRanges))).toEqual([]);
    const dhcp = v4only.map((n) =>
      n.ifName === 'lo'
        ? n
        : {
            ...n,
            plugins: [
              { type: 'bridge', ipam: { type: 'dhcp' } },
              { type: 'portmap', capabilities: { portMappings: true } },
            ],
          },
    );
    expect(hostIpFamilyProblems(m, await viewsOf(dhcp))).toEqual([]);
    const noPortmap = v4only.map((n) => ({ ...n, plugins: n.plugins.filter((p) => p.type !== 'portmap') }));
    expect(hostIpFamilyProblems(m, await viewsOf(noPortmap))).toEqual([]);
    expect(networkFamilies((await v4onlyView())[1]!)).toEqual(new Set([4]));
    const dual = {
      ...v4only[1]!,
      plugins: [{ type: 'bridge', ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24' }], [{ subnet: 'fd00:1::/64' }]] } }],
    };
    expect(networkFamilies((await viewsOf([v4only[0]!, dual]))[1]!)).toEqual(new Set([4, 6]));
  });
});

describe('preview', () => {
  it('reports what run would refuse as errors, naming the field, instead of failing (the form previews while typing)', async () => {
    const p = await engine.preview({
      config: { ...base, port_mappings: [{ container_port: 80, host_port: 8080, host_ip: '10.0.' }], linux: { sysctls: { 'net.': '1' } } },
    });
    expect(p.errors).toEqual([
      expect.stringMatching(/^port_mappings\[0\]\.host_ip: "10\.0\." is not an IP address/),
      expect.stringMatching(/^linux\.sysctls\["net\."\]: /),
    ]);
    expect(p.plugins.length).toBeGreaterThan(0);
  });
});
