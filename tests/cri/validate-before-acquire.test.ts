/**
 * Over CRI: the input fuzzing found answered UNKNOWN after the netns and an IP were acquired (NUL in CNI_ARGS, a
 * host_ip that is not an IP, `net`/`net.` sysctls, sysctl values the kernel refuses) is INVALID_ARGUMENT naming the
 * field, and the engine acquired nothing. The fakes behind the engine fail like the host (helpers/fake-host-engine),
 * so a case that got through would come back UNKNOWN here.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as Code, type ServiceError } from '@grpc/grpc-js';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { fromGrpcError } from '../../electron/cri/errors';
import { createFakeHostEngine, type FakeHostEngine } from './helpers/fake-host-engine';
import { podConfig, rawClient, rpc, tempDir } from './helpers/grpc';

const tmp = tempDir('podscope-r3-validate-');
let host: FakeHostEngine;
let server: CriServer;
let client: pb.RuntimeServiceClient;

beforeAll(async () => {
  host = await createFakeHostEngine('podscope-r3-validate-engine-');
  server = await startCriServer({ engine: host.engine, socketPath: join(tmp.dir, 'cri.sock') });
  client = rawClient(server.socketPath);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await host?.dispose();
  tmp.cleanup();
});

const linux = (sysctls: Record<string, string>) => pb.LinuxPodSandboxConfig.fromPartial({ sysctls });
const cases: Array<[string, pb.PodSandboxConfig, string]> = [
  ['NUL in metadata.name', podConfig('a\u0000b'), 'metadata.name'],
  ['NUL in a label', podConfig('lbl', { labels: { app: '\u0000' } }), 'labels.app'],
  ['NUL in an annotation', podConfig('ann', { annotations: { 'example.com/x': 'a\u0000' } }), 'annotations["example.com/x"]'],
  [
    'a host_ip that is not an IP',
    podConfig('hip', { portMappings: [pb.PortMapping.fromPartial({ containerPort: 80, hostPort: 8080, hostIp: 'not-an-ip' })] }),
    'port_mappings[0].host_ip',
  ],
  ['sysctl "net"', podConfig('s1', { linux: linux({ net: '1' }) }), 'linux.sysctls.net'],
  ['sysctl "net."', podConfig('s2', { linux: linux({ 'net.': '1' }) }), 'linux.sysctls["net."]'],
  ['an empty sysctl value', podConfig('s3', { linux: linux({ 'net.ipv4.ip_forward': '' }) }), 'linux.sysctls["net.ipv4.ip_forward"]'],
  [
    'a sysctl value with a newline',
    podConfig('s4', { linux: linux({ 'net.ipv4.ip_forward': '1\n1' }) }),
    'linux.sysctls["net.ipv4.ip_forward"]',
  ],
  [
    'a kernel.shmmax value that is not an unsigned integer',
    podConfig('s5', { linux: linux({ 'kernel.shmmax': 'lots' }) }),
    'linux.sysctls["kernel.shmmax"]',
  ],
  [
    'a kernel.sem SEMMNI above the limit',
    podConfig('s6', { linux: linux({ 'kernel.sem': '250 32000 32 40000' }) }),
    'linux.sysctls["kernel.sem"]',
  ],
];

describe('RunPodSandbox over CRI', () => {
  it.each(cases)('%s: INVALID_ARGUMENT naming the field, nothing acquired', async (_what, config, field) => {
    const before = host.acquisitions();
    const e = (await rpc(client, (c) => c.runPodSandbox, { config, runtimeHandler: '' }).then(
      () => undefined,
      (x: unknown) => x,
    )) as ServiceError;
    expect(e?.code).toBe(Code.INVALID_ARGUMENT);
    expect(e.details).toContain(`${field}:`);
    // a Podscope client gets the engine's code back through the trailer
    expect(fromGrpcError(e, 'test').code).toBe('InvalidArgument');
    expect(host.acquisitions()).toBe(before);
    expect(host.held()).toEqual({ netns: 0, containers: 0, files: 0, shm: 0, cniCache: 0 });
  });
});
