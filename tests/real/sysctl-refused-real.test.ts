/**
 * A sysctl value the kernel refuses, on a real engine (netns, Debian's CNI plugins, runc): one whose form is known is
 * refused before anything is acquired; one only the kernel knows is wrong (net.ipv4.tcp_syncookies=-1 parses as an
 * integer, the kernel's range is 0..2) fails inside runc and still comes back as InvalidArgument naming the sysctl and
 * the value. Either way no sandbox, namespace, veth, reservation or rule is left (teardown runs the leak check).
 * Needs root. Bridge and subnets from the test kit's allocator (a lease), temp dirs /tmp/podscope-ux171-*.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { PodscopeError } from '../../shared/domain/errors';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge');

let env: RealEnv;
let engine: SandboxEngine;

const pod = (name: string, sysctls: Record<string, string>): PodSandboxConfigInput => ({
  metadata: { name, namespace: 'podscope-ux171', uid: `uid-${name}` },
  linux: { sysctls },
});

async function refusal(config: PodSandboxConfigInput): Promise<PodscopeError> {
  const e = await engine.run({ config }).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(PodscopeError);
  return e as PodscopeError;
}

describe.skipIf(!canRun)('sysctl values the kernel refuses (real engine)', () => {
  beforeAll(async () => {
    env = await createRealEnv({ tag: 'ux171' });
    engine = await env.engine();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('a value of the wrong form is InvalidArgument before anything is acquired', async () => {
    const e = await refusal(pod('shmmax', { 'kernel.shmmax': 'lots' }));
    expect(e.code).toBe('InvalidArgument');
    expect(e.message).toContain('linux.sysctls["kernel.shmmax"]: value "lots" is not an unsigned 64-bit integer');
    expect(await engine.list()).toEqual([]);
  });

  it('a value only the kernel refuses fails in runc and is still InvalidArgument naming the sysctl and the value', async () => {
    const e = await refusal(pod('syncookies', { 'net.ipv4.tcp_syncookies': '-1' }));
    expect(e.message).toBe('linux.sysctls["net.ipv4.tcp_syncookies"]: the kernel refused value "-1" (invalid argument)');
    expect(e.code).toBe('InvalidArgument');
    expect(await engine.list()).toEqual([]);
    // the same pod with a value the kernel takes runs
    const { id } = await engine.run({ config: pod('syncookies', { 'net.ipv4.tcp_syncookies': '1' }) });
    expect((await engine.status(id)).state).toBe('SANDBOX_READY');
    await engine.stop(id);
    await engine.remove(id);
  });
});
