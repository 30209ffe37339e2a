/**
 * `podscope` with an engine in each CLI process (no daemon): the container outlives the command that started it,
 * its log shim keeps writing after that process exited, and the next commands find it in the store. Image loaded
 * from a docker-save archive built offline. Bridge and subnets from the test kit's allocator (a lease), temp dirs
 * /tmp/podscope-c1-*.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBusyboxImage, writeDockerSave } from '../../testkit/busybox-image';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { engineFlagsFor } from '../../testkit/engine-flags';
import { podscope as podscopeCli } from './helpers/podscope-cli';

let env: RealEnv;
let flags: string[];

function podscope(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // exec -s: what follows the container id is the command, so the engine flags go first
  return podscopeCli(...(args[0] === 'exec' ? [...flags, ...args] : [...args, ...flags]));
}

beforeAll(async () => {
  env = await createRealEnv({ tag: 'c1cl' });
  const o = env.options;
  flags = engineFlagsFor({ ...o, cniBinDirs: ['/usr/lib/cni'] });
});

afterAll(async () => {
  await env?.teardown();
});

describe('containers across CLI processes', () => {
  it('run in one process, then exec -s, logs, ps, stop, rm, stopp, rmp in others; output keeps flowing in between', async () => {
    const tar = join(env.dir, 'busybox.tar');
    writeDockerSave(tar, [{ image: buildBusyboxImage(), repoTags: ['podscope.test/busybox:1'] }]);
    expect((await podscope('images', 'load', tar)).code).toBe(0);
    await writeFile(
      join(env.dir, 'pod.json'),
      JSON.stringify({
        metadata: { name: 'cli-ctr', namespace: 'default', uid: 'cli-ctr-uid' },
        hostname: 'cli-ctr',
        log_directory: join(env.dir, 'logs'),
      }),
    );
    await writeFile(
      join(env.dir, 'ctr.json'),
      JSON.stringify({
        metadata: { name: 'ticker' },
        image: { image: 'podscope.test/busybox:1' },
        command: ['sh', '-c', 'i=0; while true; do echo tick$i; i=$((i+1)); sleep 0.2; done'],
        log_path: 'ticker.log',
      }),
    );
    const run = await podscope('run', join(env.dir, 'ctr.json'), join(env.dir, 'pod.json'));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const id = run.stdout.trim();

    // the process that started it is gone; the container runs and its shim keeps logging
    const ex = await podscope('exec', '-s', id, 'cat', '/etc/hostname');
    expect(ex).toMatchObject({ code: 0, stdout: 'cli-ctr\n' });
    let logs = await podscope('logs', id);
    for (let i = 0; i < 50 && !logs.stdout.includes('tick5'); i++) logs = await podscope('logs', id);
    expect(logs.stdout).toContain('tick5\n');
    expect((await podscope('ps', '-q')).stdout.trim()).toBe(id);

    expect((await podscope('stop', '-t', '2', id)).code).toBe(0);
    expect((await podscope('ps', '-a')).stdout).toMatch(/EXITED\s+ticker\s+0\s+\S+\s+143 Error/);
    expect((await podscope('rm', id)).code).toBe(0);
    const podId = (await podscope('pods', '-q')).stdout.trim();
    expect((await podscope('stopp', podId)).code).toBe(0);
    expect((await podscope('rmp', podId)).code).toBe(0);
    expect((await podscope('ps', '-a', '-q')).stdout).toBe('');
  });
});
