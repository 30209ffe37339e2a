/**
 * The floor: the same external steps the engine performs for one sandbox — pin a netns, exec each CNI plugin with a
 * hand-built stdin, `runc run -d`, and the teardown — back to back, with no engine logic around them.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PodSandboxConfigSchema } from '../shared/domain/config';
import { NodeProcessRunner, runChecked, type ProcessRunner } from '../electron/engine/os/exec';
import { buildPauseSpec } from '../electron/engine/runtime/oci-spec';
import { ensurePauseRootfs } from '../electron/engine/runtime/pause-rootfs';
import type { Samples } from './stats';

export interface FloorSpec {
  dir: string;
  conflist: { name: string; cniVersion: string; plugins: Array<Record<string, unknown>> };
  binDir: string;
  hostPort: number;
}

const TIMEOUT = 60_000;

export async function measureFloorOnce(
  spec: FloorSpec,
  i: number,
  samples: Samples,
  runner: ProcessRunner = new NodeProcessRunner(),
): Promise<void> {
  const id = `floor${process.pid}x${i}`.padEnd(64, '0');
  const netns = join('/var/run/netns', `psc-floor-${process.pid}-${i}`);
  const runcRoot = join(spec.dir, 'floor-runc');
  const timed = async (key: string, fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    samples.add(key, performance.now() - t0);
  };
  const plugin = (type: string, command: string, ifName: string, stdin: object, netnsPath = netns) =>
    runChecked(runner, {
      file: join(spec.binDir, type),
      input: JSON.stringify(stdin),
      timeoutMs: TIMEOUT,
      env: {
        ...process.env,
        CNI_COMMAND: command,
        CNI_CONTAINERID: id,
        CNI_NETNS: netnsPath,
        CNI_IFNAME: ifName,
        CNI_ARGS: 'IgnoreUnknown=1',
        CNI_PATH: spec.binDir,
      },
    });
  const runtimeConfig: Record<string, unknown> = {
    portMappings: [{ hostPort: spec.hostPort + i, containerPort: 80, protocol: 'tcp' }],
    bandwidth: { ingressRate: 10_000_000, ingressBurst: 4294967295, egressRate: 10_000_000, egressBurst: 4294967295 },
  };
  const lo = { cniVersion: '0.3.1', name: 'cni-loopback', type: 'loopback' };
  let prev: unknown;
  const stdinFor = (p: Record<string, unknown>, prevResult?: unknown) => {
    const caps = Object.keys((p.capabilities as Record<string, boolean> | undefined) ?? {}).filter((k) => k in runtimeConfig);
    return {
      ...p,
      name: spec.conflist.name,
      cniVersion: spec.conflist.cniVersion,
      ...(prevResult ? { prevResult } : {}),
      ...(caps.length ? { runtimeConfig: Object.fromEntries(caps.map((k) => [k, runtimeConfig[k]])) } : {}),
    };
  };

  try {
    await timed('netns create', () =>
      mkdir('/var/run/netns', { recursive: true })
        .then(() => writeFile(netns, '', { flag: 'wx' }))
        .then(() => runChecked(runner, { file: 'unshare', args: [`--net=${netns}`, 'true'], timeoutMs: TIMEOUT })),
    );
    await timed('ADD loopback', () => plugin('loopback', 'ADD', 'lo', lo));
    for (const p of spec.conflist.plugins) {
      await timed(`ADD ${String(p.type)}`, async () => {
        prev = JSON.parse((await plugin(String(p.type), 'ADD', 'eth0', stdinFor(p, prev))).stdout);
      });
    }
    const bundle = join(spec.dir, 'floor-bundles', id);
    await mkdir(bundle, { recursive: true });
    const rootfsPath = await ensurePauseRootfs({ rootfsDir: join(spec.dir, 'floor-rootfs') });
    const config = PodSandboxConfigSchema.parse({ metadata: { name: 'floor', namespace: 'bench', uid: String(i) } });
    await writeFile(
      join(bundle, 'config.json'),
      JSON.stringify(
        buildPauseSpec({
          id,
          config,
          netnsPath: netns,
          rootfsPath,
          resolvConfPath: '/etc/resolv.conf',
          shmPath: '/dev/shm',
          engineOomScoreAdj: 0,
        }),
      ),
    );
    await timed('runc run -d', () =>
      runChecked(runner, {
        file: 'runc',
        args: ['--root', runcRoot, 'run', '--detach', '--bundle', bundle, id],
        timeoutMs: TIMEOUT,
        ignoreOutput: true,
      }),
    );
  } catch (e) {
    // the same steps best-effort, so a failed measurement leaks no netns, container, IP or rule
    const quiet = async (fn: () => Promise<unknown>) => {
      await fn().catch(() => undefined);
    };
    await quiet(() => runner.run({ file: 'runc', args: ['--root', runcRoot, 'delete', '--force', id], timeoutMs: TIMEOUT }));
    for (const p of [...spec.conflist.plugins].reverse()) await quiet(() => plugin(String(p.type), 'DEL', 'eth0', stdinFor(p, prev)));
    await quiet(() => plugin('loopback', 'DEL', 'lo', lo));
    await quiet(() => runner.run({ file: 'umount', args: ['-l', netns], timeoutMs: TIMEOUT }).then(() => rm(netns, { force: true })));
    throw e;
  }

  await timed('runc kill', () => runChecked(runner, { file: 'runc', args: ['--root', runcRoot, 'kill', id, 'KILL'], timeoutMs: TIMEOUT }));
  await timed('runc delete', () =>
    runChecked(runner, { file: 'runc', args: ['--root', runcRoot, 'delete', '--force', id], timeoutMs: TIMEOUT }),
  );
  for (const p of [...spec.conflist.plugins].reverse())
    await timed(`DEL ${String(p.type)}`, () => plugin(String(p.type), 'DEL', 'eth0', stdinFor(p, prev)));
  await timed('DEL loopback', () => plugin('loopback', 'DEL', 'lo', lo));
  await timed('netns remove', () =>
    runChecked(runner, { file: 'umount', args: ['-l', netns], timeoutMs: TIMEOUT }).then(() => rm(netns, { force: true })),
  );
}
