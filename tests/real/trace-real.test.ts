/**
 * Why a path failed, measured from the kernel: real netns, Debian's bridge/host-local/portmap plugins, real netfilter.
 * Foreign rules are added by the test to filter OUTPUT (the admin's, owned by nobody here), a blackhole route inside
 * the pod's netns; every one is removed again before the test ends. Subnet 10.180.0.0/24, bridge psc-trc.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/sandbox/service';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const hostPort = 25000 + Math.floor(Math.random() * 900);
const GW4 = '10.180.0.1';

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'podscope-trc', uid: `uid-${name}` }, hostname: name, ...extra };
}

let env: RealEnv;
let engine: SandboxEngine;
let a: string;
let netnsA: string;

beforeAll(async () => {
  env = await createRealEnv({ tag: 'trc', subnet: 180, ipMasq: true });
  engine = await env.engine({ probeOnReady: false });
  ({ id: a } = await engine.run({ config: pod('web', { port_mappings: [{ container_port: 8080, host_port: hostPort }] }) }));
  netnsA = (await engine.status(a)).netnsPath!;
});

afterAll(async () => {
  await env?.teardown();
});

describe('connect errors reported as what they were', () => {
  it('a blackhole route to the gateway inside the pod makes the gateway path unreachable, not a timeout', async () => {
    sh('nsenter', [`--net=${netnsA}`, 'ip', 'route', 'add', 'blackhole', `${GW4}/32`]);
    try {
      const r = await engine.probe(a);
      const gw = r.paths.find((p) => p.kind === 'gateway' && p.family === 4)!;
      expect(gw).toMatchObject({ verdict: 'unreachable', measured: true });
      expect(gw.note).toContain('EINVAL');
      // the v6 gateway path has no such route: still reachable
      expect(r.paths.find((p) => p.kind === 'gateway' && p.family === 6)?.verdict).toBe('reachable');
    } finally {
      sh('nsenter', [`--net=${netnsA}`, 'ip', 'route', 'del', 'blackhole', `${GW4}/32`]);
    }
  });
});
