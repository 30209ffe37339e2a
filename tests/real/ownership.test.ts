/**
 * Ownership scenarios on the real host: a daemon (an engine in this process) holds a READY pod; then other engines
 * and CLI commands are pointed at its dirs in ways that used to kill the pod. The pod must stay READY, its runc
 * container running with the same pid, and its record untouched.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../electron/engine/index';
import { OWNER_ANNOTATION } from '../../electron/engine/pods/ownership';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { hasCode } from '../../shared/domain/errors';
import { createScopedEnv, runcList, sh, type ScopedEnv } from './helpers/scoped-env';
import { podscope } from './helpers/podscope-cli';

let env: ScopedEnv;
let daemon: SandboxEngine;
let podId: string;
let pausePid: number;
let other: string;

/** the flags of the daemon's dirs with some replaced, e.g. { '--state-dir': other } */
function flagsWith(overrides: Record<string, string>): string[] {
  const f = [...env.flags];
  for (const [k, v] of Object.entries(overrides)) f[f.indexOf(k) + 1] = v;
  return f;
}

function storeSnapshot(): Record<string, string> {
  const dir = join(env.options.stateDir, 'store');
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** The daemon's pod as the kernel and runc have it, not as any engine reports it. */
async function expectPodUntouched(records: Record<string, string>): Promise<void> {
  const container = runcList(join(env.options.runDir, 'runc')).find((c) => c.id === podId);
  expect(container?.status).toBe('running');
  expect(existsSync(`/proc/${pausePid}`)).toBe(true);
  const st = await daemon.status(podId);
  expect(st.state).toBe('SANDBOX_READY');
  expect(st.pause.pid).toBe(pausePid);
  // the netns is still pinned (an nsfs mount on its file) and is the pause process's namespace
  expect(readFileSync('/proc/self/mountinfo', 'utf8')).toMatch(
    new RegExp(` ${st.netnsPath!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} .* nsfs `),
  );
  expect(sh('readlink', [`/proc/${pausePid}/ns/net`]).trim()).toBe(
    sh('nsenter', [`--net=${st.netnsPath!}`, 'readlink', '/proc/self/ns/net']).trim(),
  );
  expect(storeSnapshot()).toEqual(records);
}

beforeAll(async () => {
  env = await createScopedEnv('own');
  other = await mkdtemp('/tmp/podscope-r2-own-other-');
  daemon = await createEngine(env.options);
  ({ id: podId } = await daemon.run({
    config: {
      metadata: { name: 'daemon-pod', namespace: 'own', uid: 'u-own' },
      port_mappings: [{ container_port: 80, host_port: env.port(0) }],
    },
  }));
  pausePid = (await daemon.status(podId)).pause.pid!;
});

afterAll(async () => {
  await daemon?.close();
  await env?.cleanup();
  if (other) await rm(other, { recursive: true, force: true });
});

describe('ownership by identity', () => {
  it("stamps the daemon's state dir id on its runc container (runc list shows the annotation)", async () => {
    const { stateDirId } = await daemon.info();
    expect(stateDirId).toMatch(/^[0-9a-f]{32}$/);
    expect(runcList(join(env.options.runDir, 'runc')).find((c) => c.id === podId)?.annotations?.[OWNER_ANNOTATION]).toBe(stateDirId);
  });

  it('the lock is held by the daemon alone: the pause process did not inherit the lock file (it would outlive the daemon)', () => {
    const open = (pid: number | string) =>
      readdirSync(`/proc/${pid}/fd`).map((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return '';
        }
      });
    expect(
      open(process.pid)
        .filter((f) => f.endsWith('/engine.lock'))
        .sort(),
    ).toEqual([join(env.options.runDir, 'engine.lock'), join(env.options.stateDir, 'engine.lock')].sort());
    expect(open(pausePid).filter((f) => f.endsWith('/engine.lock'))).toEqual([]);
  });

  it('a second engine with its own state dir but the same run dir is refused, naming the holder; the pod stays READY', async () => {
    const records = storeSnapshot();
    await expect(createEngine({ ...env.options, stateDir: join(other, 'state-2') })).rejects.toSatisfy(
      (e) =>
        hasCode(e, 'FailedPrecondition') &&
        (e as Error).message.includes(`run dir ${env.options.runDir} is in use by another Podscope engine (pid ${process.pid})`),
    );
    await expectPodUntouched(records);
  });

  it("even past the lock (noLock), an engine on another state dir never kills the daemon's container: not its owner", async () => {
    const records = storeSnapshot();
    const intruder = await createEngine({ ...env.options, stateDir: join(other, 'state-3') }, { noLock: true, log: () => undefined });
    try {
      const info = await intruder.info();
      expect(info.startupGc).toEqual([]);
      expect(info.problems.join('\n')).toContain(
        `runc container ${podId} (running) under this engine's runc root has no record here and is not ours (owned by state dir id ${(await daemon.info()).stateDirId})`,
      );
    } finally {
      await intruder.close();
    }
    await expectPodUntouched(records);
  });

  it("`podscope pods --state-dir OTHER --run-dir <daemon's>` exits 0 and changes nothing (not even creating OTHER)", async () => {
    const records = storeSnapshot();
    const otherState = join(other, 'never-created');
    const r = await podscope('pods', ...flagsWith({ '--state-dir': otherState }));
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1); // the header: OTHER has no pods
    expect(existsSync(otherState)).toBe(false);
    // nor does a look at dirs nobody has used create them (runc would create its --root on `runc list`)
    const fresh = Object.fromEntries(
      ['--state-dir', '--run-dir', '--netns-dir', '--cni-cache-dir'].map((f) => [f, join(other, `fresh${f}`)]),
    );
    const look = await podscope('pods', ...flagsWith(fresh));
    expect(look.code).toBe(0);
    expect(Object.values(fresh).filter((d) => existsSync(d))).toEqual([]);
    await expectPodUntouched(records);
  });

  it('read-only verbs work beside the daemon on its own dirs (no lock taken) and change nothing', async () => {
    const records = storeSnapshot();
    const pods = await podscope('pods', '--no-trunc', ...env.flags);
    expect(pods.code).toBe(0);
    expect(pods.stdout).toMatch(new RegExp(`${podId}\\s+\\S+.*READY\\s+daemon-pod`));
    const inspect = await podscope('inspectp', '-o', 'json', '--live', podId.slice(0, 12), ...env.flags);
    expect(inspect.code).toBe(0);
    expect(JSON.parse(inspect.stdout).state).toBe('SANDBOX_READY');
    // a verb that changes things is still refused while the daemon holds the dirs
    const stop = await podscope('stopp', podId, ...env.flags);
    expect(stop.code).toBe(5);
    expect(stop.stderr).toContain(`in use by another Podscope engine (pid ${process.pid})`);
    await expectPodUntouched(records);
  });

  it('a bind mount of the state dir (and of the run dir) is the same lock: refused, naming the holder', async () => {
    const records = storeSnapshot();
    const boundState = join(other, 'bound-state');
    const boundRun = join(other, 'bound-run');
    await mkdir(boundState);
    await mkdir(boundRun);
    sh('mount', ['--bind', env.options.stateDir, boundState]);
    sh('mount', ['--bind', env.options.runDir, boundRun]);
    try {
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(` ${boundState} `);
      await expect(createEngine({ ...env.options, stateDir: boundState, runDir: join(other, 'run-4') })).rejects.toSatisfy(
        (e) =>
          hasCode(e, 'FailedPrecondition') &&
          (e as Error).message.includes(`state dir ${boundState} is in use by another Podscope engine (pid ${process.pid})`),
      );
      await expect(createEngine({ ...env.options, stateDir: join(other, 'state-5'), runDir: boundRun })).rejects.toSatisfy(
        (e) =>
          hasCode(e, 'FailedPrecondition') &&
          (e as Error).message.includes(`run dir ${boundRun} is in use by another Podscope engine (pid ${process.pid})`),
      );
    } finally {
      sh('umount', [boundState]);
      sh('umount', [boundRun]);
    }
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${boundState} `);
    await expectPodUntouched(records);
  });
});
