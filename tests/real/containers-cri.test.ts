/**
 * crictl's container flows through `podscope cri`: a CRI server over a real engine (netns, CNI, runc, busybox
 * rootfs), driven by the `podscope` CLI with --endpoint (the CRI client) and by the client in process for the
 * CreateContainer+StartContainer timing. Bridge and subnets from the test kit's allocator (a lease).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCriEndpointApi, type CriEndpointApi } from '../../electron/cri/client';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { BUSYBOX_IMAGE, LocalBusyboxStore, buildBusyboxTree } from '../../testkit/local-busybox-store';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { podscope as podscopeCli } from './helpers/podscope-cli';

let env: RealEnv;
let engine: SandboxEngine;
let server: CriServer;
let client: CriEndpointApi;
let dir: string;
let endpoint: string;

function podscope(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return podscopeCli('--endpoint', endpoint, ...args);
}

beforeAll(async () => {
  env = await createRealEnv({ tag: 'c1cr' });
  dir = await mkdtemp(join(tmpdir(), 'podscope-c1-cri-'));
  await buildBusyboxTree(join(dir, 'busybox'));
  engine = await env.engine({}, { images: new LocalBusyboxStore(join(dir, 'busybox')) });
  server = await startCriServer({ engine, socketPath: join(dir, 'cri.sock') });
  endpoint = `unix://${server.socketPath}`;
  client = createCriEndpointApi(endpoint);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await env?.teardown();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('crictl flows through podscope cri', () => {
  it('run, ps, exec -s, logs, inspect, stats, stop, rm, then stopp/rmp', async () => {
    const podFile = join(dir, 'pod.yaml');
    const ctrFile = join(dir, 'ctr.yaml');
    await writeFile(
      podFile,
      `metadata: {name: cri-web, namespace: default, uid: cri-web-uid}
hostname: cri-web
log_directory: ${join(dir, 'logs')}
linux:
  security_context:
    seccomp: {profile_type: 0}
`,
    );
    await writeFile(
      ctrFile,
      `metadata: {name: web}
image: {image: ${BUSYBOX_IMAGE}}
command: [sh, -c, 'echo started; exec httpd -f -p 8080 -h /www']
log_path: web.log
linux:
  security_context:
    seccomp: {profile_type: RuntimeDefault}
`,
    );
    const run = await podscope('run', ctrFile, podFile);
    expect(run.stderr).toContain('profile_type: "RuntimeDefault" is an enum name');
    expect(run.code).toBe(0);
    const id = run.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{64}$/);

    const ps = await podscope('ps');
    expect(ps.stdout).toMatch(new RegExp(`^${id.slice(0, 13)}\\s+${BUSYBOX_IMAGE.replace(/\./g, '\\.')}.*RUNNING\\s+web\\s+0`, 'm'));

    const ex = await podscope('exec', '-s', id.slice(0, 13), 'sh', '-c', 'echo hi; echo oops >&2; exit 4');
    expect(ex).toMatchObject({ code: 4, stdout: 'hi\n', stderr: 'oops\n' });

    let logs = await podscope('logs', id);
    for (let i = 0; i < 50 && !logs.stdout.includes('started'); i++) logs = await podscope('logs', id);
    expect(logs.stdout).toBe('started\n');

    const inspect = JSON.parse((await podscope('inspect', '-o', 'json', id)).stdout) as {
      seccomp: string;
      state: string;
      pid: number;
      logPath: string;
    };
    expect(inspect).toMatchObject({ seccomp: 'runtime/default', state: 'CONTAINER_RUNNING', logPath: join(dir, 'logs', 'web.log') });
    expect(inspect.pid).toBeGreaterThan(0);

    const stats = await podscope('stats', id);
    expect(stats.code).toBe(0);
    // decimal sizes, as crictl prints memory (units.HumanSize: "339.2kB"), never MiB
    expect(stats.stdout).toMatch(/\d(?:\.\d+)?(?:B|kB|MB|GB)\b/);
    expect(stats.stdout).not.toMatch(/[KMG]iB/);

    expect((await podscope('stop', '-t', '1', id)).code).toBe(0);
    const all = await podscope('ps', '-a');
    expect(all.stdout).toMatch(/EXITED\s+web\s+0\s+\S+\s+143 Error/);
    expect((await podscope('rm', id)).code).toBe(0);
    expect((await podscope('ps', '-a', '-q')).stdout).toBe('');

    const pods = await podscope('pods', '-q');
    const podId = pods.stdout.trim();
    expect((await podscope('stopp', podId)).code).toBe(0);
    expect((await podscope('rmp', podId)).code).toBe(0);
  });

  it('CreateContainer+StartContainer over CRI: p50 (printed)', async () => {
    const { id: podId } = await client.run({
      config: { metadata: { name: 'cri-bench', namespace: 'default', uid: 'cri-bench-uid' }, hostname: 'bench' },
    });
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      const { id } = await client.createContainer({
        podSandboxId: podId,
        config: { metadata: { name: `b${i}` }, image: { image: BUSYBOX_IMAGE }, command: ['sleep', '100'] },
      });
      await client.startContainer(id);
      times.push(performance.now() - t0);
      const st = await client.containerStatus(id);
      expect(st.state).toBe('CONTAINER_RUNNING');
      await client.removeContainer(id);
    }
    times.sort((a, b) => a - b);
    console.log(
      `CreateContainer+StartContainer over CRI (busybox, copied rootfs): p50 ${times[5]!.toFixed(1)} ms, min ${times[0]!.toFixed(1)}, max ${times[9]!.toFixed(1)}`,
    );
    expect(times).toHaveLength(10);
    await client.stop(podId);
    await client.remove(podId);
  });
});
