/**
 * fast-check arbitraries of CRI RunPodSandbox requests for the CRI fuzz tests: NUL, control and non-BMP characters
 * in names, labels, annotations, hostnames and DNS entries; port mappings with any numbers and host_ips; sysctls;
 * bandwidth annotations; namespace modes. `level` (0-3) sets how many fields are garbage, so OK runs are common.
 */
import fc from 'fast-check';
import * as pb from '../../../electron/cri/generated/runtime_v1';
import { EGRESS_ANNOTATION, INGRESS_ANNOTATION } from '../../../shared/domain/bandwidth';

export interface RequestArbitraryOptions {
  /**
   * Valid-looking values a real host accepts too: kernel-valid sysctl values (the kernel's own range checks are not
   * something the CRI layer can know, containerd answers UNKNOWN for them as well) and bandwidth rates tc takes.
   */
  realHost?: boolean;
}

export function runPodSandboxRequest(opts: RequestArbitraryOptions = {}): fc.Arbitrary<pb.RunPodSandboxRequest> {
  const nasty = fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    '\n',
    'a\nb',
    '\r\n',
    '\t',
    '\u001f',
    '\u007f',
    ';',
    '=',
    'a=b;c',
    '../x',
    '/',
    ' ',
    'é',
    '😀',
    '\u202e',
    '\ufeff',
    'x'.repeat(300),
  );
  /** anything a proto string can carry, weighted towards the characters that matter */
  const anyString = fc.oneof(
    { arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 20 }), weight: 3 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 2 },
    { arbitrary: nasty, weight: 2 },
    { arbitrary: fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), nasty).map(([a, b]) => a + b), weight: 2 },
  );
  /** names that can succeed, from a small pool (so ALREADY_EXISTS happens), or anything */
  const name = fc.oneof(
    { arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), weight: 4 },
    { arbitrary: fc.constantFrom('web', 'db', 'cache'), weight: 1 },
    { arbitrary: anyString, weight: 3 },
  );
  const int32 = fc.oneof(
    fc.integer({ min: -3, max: 70_000 }),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    fc.constantFrom(0, 80, 65535, 65536),
  );
  const hostIp = fc.oneof(
    { arbitrary: fc.constant(''), weight: 4 },
    { arbitrary: fc.ipV4(), weight: 2 },
    { arbitrary: fc.ipV6(), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        '127.0.0.1',
        '::1',
        '0.0.0.0',
        '::',
        'fe80::1%eth0',
        '01.2.3.4',
        '1.2.3',
        '256.0.0.1',
        'localhost',
        '10.0.0.1/24',
        '[::1]',
        '1.2.3.4 ',
      ),
      weight: 2,
    },
    { arbitrary: anyString, weight: 2 },
  );
  const portMapping = fc.record({
    protocol: fc.oneof(fc.constantFrom(0, 1, 2), fc.integer({ min: -1, max: 5 })),
    containerPort: int32,
    hostPort: int32,
    hostIp,
  });
  const sysctlName = fc.oneof(
    fc.constantFrom(
      'net.ipv4.ip_forward',
      'net.core.somaxconn',
      'net.ipv4.ping_group_range',
      'kernel.shm_rmid_forced',
      'kernel.msgmax',
      'fs.mqueue.msg_max',
      'kernel.domainname',
    ),
    fc.constantFrom(
      'net',
      'net.',
      '.net',
      'net..ipv4',
      'net.ipv4.',
      'net/ipv4/ip_forward',
      'net.ipv4/ip_forward',
      'kernel.panic',
      'kernel.hostname',
      'fs.mqueue.',
      'net.\u0000',
      'net.a b',
      'vm.swappiness',
      '',
    ),
    anyString,
  );
  const sysctlValue = fc.oneof(fc.constantFrom('1', '0', '1024', '0 2147483647', '', ' ', '1\n2', '\u0000', '1\t2'), anyString);
  const bandwidthValue = fc.oneof(
    fc.constantFrom('10M', '1k', '999', '1Ki', '1P', '2P', '1Ei', 'abc', '', '1e3', '-1M', '0.5k', '+', '.'),
    anyString,
    fc.nat({ max: 300 }).map((n) => `${'1'.repeat(n)}x`),
  );
  const stringMap = (key: fc.Arbitrary<string>) => fc.dictionary(key, anyString, { maxKeys: 3 });
  const annotations: fc.Arbitrary<Record<string, string>> = fc
    .tuple(
      stringMap(fc.oneof(fc.stringMatching(/^[a-z.\/]{1,12}$/), anyString)),
      fc.option(bandwidthValue, { nil: undefined }),
      fc.option(bandwidthValue, { nil: undefined }),
    )
    .map(([m, ingress, egress]) => ({
      ...m,
      ...(ingress !== undefined && { [INGRESS_ANNOTATION]: ingress }),
      ...(egress !== undefined && { [EGRESS_ANNOTATION]: egress }),
    }));
  const namespaceMode = fc.oneof(
    { arbitrary: fc.constant(pb.NamespaceMode.POD), weight: 4 },
    { arbitrary: fc.constantFrom(pb.NamespaceMode.CONTAINER, pb.NamespaceMode.NODE, pb.NamespaceMode.TARGET), weight: 2 },
  );
  const securityContext = fc.record(
    {
      namespaceOptions: fc.record({ network: namespaceMode, pid: namespaceMode, ipc: namespaceMode }),
      runAsUser: fc.record({ value: fc.oneof(fc.constantFrom('0', '65534', '-1', '4294967296'), fc.integer().map(String)) }),
      privileged: fc.boolean(),
      readonlyRootfs: fc.boolean(),
    },
    { requiredKeys: [] },
  );
  const linux = fc.record(
    {
      cgroupParent: fc.oneof({ arbitrary: fc.constant(''), weight: 4 }, { arbitrary: anyString, weight: 1 }),
      sysctls: fc.dictionary(sysctlName, sysctlValue, { maxKeys: 3 }),
      securityContext,
    },
    { requiredKeys: [] },
  );
  const dnsConfig = fc.record({
    servers: fc.array(fc.oneof(fc.ipV4(), anyString), { maxLength: 2 }),
    searches: fc.array(anyString, { maxLength: 2 }),
    options: fc.array(anyString, { maxLength: 2 }),
  });

  /**
   * How much of a config is garbage: level 0 draws every field from values that can succeed, higher levels draw more
   * fields from the arbitrary ones, so OK runs (the deep paths: CNI, runc, unwinding) are common and bad input is too.
   */
  const pick = <T>(level: number, valid: fc.Arbitrary<T>, nastyOne: fc.Arbitrary<T>): fc.Arbitrary<T> =>
    level === 0 ? valid : fc.oneof({ arbitrary: valid, weight: [0, 12, 4, 1][level]! }, { arbitrary: nastyOne, weight: 1 });
  const validName = fc.oneof(
    { arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), weight: 4 },
    { arbitrary: fc.constantFrom('web', 'db', 'cache'), weight: 1 },
  );
  const validPort = fc.record({
    protocol: fc.constantFrom(0, 1, 2),
    containerPort: fc.integer({ min: 1, max: 65535 }),
    hostPort: fc.integer({ min: -1, max: 65535 }),
    hostIp: fc.oneof(fc.constant(''), fc.ipV4(), fc.ipV6()),
  });
  const validSysctls = opts.realHost
    ? fc
        .subarray(
          [
            ['net.ipv4.ip_forward', '1'],
            ['net.core.somaxconn', '1024'],
            ['kernel.shm_rmid_forced', '1'],
            ['fs.mqueue.msg_max', '100'],
            ['net.ipv4.ping_group_range', '0\t2147483647'],
          ] as Array<[string, string]>,
          { maxLength: 2 },
        )
        .map((e) => Object.fromEntries(e))
    : fc.dictionary(
        fc.constantFrom('net.ipv4.ip_forward', 'net.core.somaxconn', 'kernel.shm_rmid_forced', 'fs.mqueue.msg_max'),
        fc.constantFrom('1', '0', '1024'),
        { maxKeys: 2 },
      );
  const validAnnotations: fc.Arbitrary<Record<string, string>> = fc
    .tuple(
      fc.dictionary(fc.stringMatching(/^[a-z.\/]{1,12}$/), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
      fc.option(opts.realHost ? fc.constantFrom('10M', '2M', '100k') : fc.constantFrom('10M', '1k', '1Ki', '1P', '0.5M'), {
        nil: undefined,
      }),
    )
    .map(([m, ingress]) => ({ ...m, ...(ingress !== undefined && { [INGRESS_ANNOTATION]: ingress }) }));
  const validLinux = fc.record(
    {
      sysctls: validSysctls,
      securityContext: fc.record(
        {
          namespaceOptions: fc.record({
            network: fc.constantFrom(pb.NamespaceMode.POD, pb.NamespaceMode.POD, pb.NamespaceMode.NODE),
            pid: fc.constant(pb.NamespaceMode.POD),
            ipc: fc.constant(pb.NamespaceMode.POD),
          }),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  );

  // One arbitrary per level, built once: building them inside the chain (a new tree of stringMatching arbitraries for
  // every config drawn) was 19 of the CRI fuzz file's 25 CPU seconds. Building draws no randomness, so a seed still
  // replays the same configs.
  const configAt = (level: number) =>
    fc.record(
      {
        metadata: fc.record({
          name: pick(level, validName, name),
          namespace: pick(level, fc.constant('fuzz'), name),
          uid: pick(level, fc.constantFrom('u1', 'u2'), name),
          attempt: pick(level, fc.constant(0), fc.nat()),
        }),
        hostname: pick(
          level,
          fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z0-9-]{1,20}$/)),
          fc.oneof(fc.stringMatching(/^[a-z0-9-]{60,70}$/), anyString),
        ),
        logDirectory: pick(level, fc.constant(''), anyString),
        dnsConfig: fc.option(
          pick(
            level,
            fc.record({
              servers: fc.array(fc.ipV4(), { maxLength: 2 }),
              searches: fc.constant<string[]>([]),
              options: fc.constant<string[]>([]),
            }),
            dnsConfig,
          ),
          { nil: undefined },
        ),
        portMappings: fc.array(pick(level, validPort, portMapping), { maxLength: 3 }),
        labels: pick(
          level,
          fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string({ maxLength: 10 }), { maxKeys: 3 }),
          stringMap(fc.oneof(fc.stringMatching(/^[a-z]{1,8}$/), anyString)),
        ),
        annotations: pick(level, validAnnotations, annotations),
        linux: fc.option(pick<pb.DeepPartial<pb.LinuxPodSandboxConfig>>(level, validLinux, linux), { nil: undefined }),
      },
      { requiredKeys: ['metadata'] },
    );
  const levels = [0, 1, 2, 3].map(configAt);
  const podSandboxConfig = fc
    .nat({ max: 3 })
    .chain((level) => levels[level]!)
    .map((c) => pb.PodSandboxConfig.fromPartial(c));
  return fc.record({
    config: fc.oneof(
      { arbitrary: podSandboxConfig, weight: 20 },
      { arbitrary: fc.constant(pb.PodSandboxConfig.fromPartial({})), weight: 1 },
    ),
    runtimeHandler: fc.oneof(
      { arbitrary: fc.constant(''), weight: 10 },
      { arbitrary: fc.constantFrom('runc', 'kata', '\u0000'), weight: 1 },
    ),
  });
}
