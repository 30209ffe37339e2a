/**
 * The pause container runs on its pod's runtime handler (root only; runc, crun and conmon installed): containerd and
 * CRI-O run the sandbox (pause/infra) container with the runtime of the pod's runtime_handler, so a crun pod's pause
 * is crun's (docs/semantics.md#runtime-handlers). Each runtime is asked directly under its pause root whether it
 * knows the pause. Bridge and subnets from the test kit's allocator (a lease), temp dirs /tmp/pph-*; everything is
 * removed in afterAll.
 */
import { readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { removeSandboxFiles, sandboxPaths } from '../../electron/engine/runtime/sandbox-files';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { processesMentioning } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';

const isRoot = process.getuid?.() === 0;
const runner = new NodeProcessRunner();
let env: RealEnv;

function pod(name: string): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'podscope-pph', uid: `uid-${name}` }, hostname: name };
}

/** `<runtime> --root <runDir>/<runtime> state <id>`: the state when that runtime knows the container, else undefined */
async function stateUnder(runtime: 'runc' | 'crun', id: string): Promise<{ status: string; pid: number } | undefined> {
  const r = await runner.run({ file: runtime, args: ['--root', join(env.dir, 'run', runtime), 'state', id], timeoutMs: 10_000 });
  return r.exitCode === 0 ? (JSON.parse(r.stdout) as { status: string; pid: number }) : undefined;
}

const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
const comm = (pid: number) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
const steps = async (engine: SandboxEngine, id: string, phase: string) =>
  (await engine.status(id)).trace.filter((t) => t.phase === phase).map((t) => t.step);

describe.skipIf(!isRoot)('the pause runs on its pod’s runtime handler', () => {
  beforeAll(async () => {
    env = await createRealEnv({ tag: 'pph', tempPrefix: 'pph-' });
  });

  afterAll(async () => {
    await env?.teardown();
  });

  // containerd and CRI-O run the sandbox container with the pod's runtime_handler's runtime: so does Podscope
  it('a crun pod’s pause is crun’s (crun’s root knows it, runc’s does not), under conmon; stop and remove end it on crun', async () => {
    const engine = await env.engine();
    const { id } = await engine.run({ config: pod('on-crun'), runtimeHandler: 'crun' });
    const status = await engine.status(id);
    const pid = status.pause.pid!;
    expect(await stateUnder('crun', id)).toMatchObject({ status: 'running', pid });
    expect(await stateUnder('runc', id)).toBeUndefined();
    expect(comm(parentOf(pid))).toBe('conmon');
    const run = status.trace.filter((t) => t.phase === 'run');
    expect(run.find((t) => t.step === 'conmon.create')?.label).toBe('conmon: crun create');
    expect(run.map((t) => t.step)).toContain('crun.start');
    expect(run.map((t) => t.step)).not.toContain('runc.start');

    await engine.stop(id);
    expect(await steps(engine, id, 'stop')).toEqual(expect.arrayContaining(['crun.kill', 'crun.wait']));
    expect((await stateUnder('crun', id))?.status).toBe('stopped');
    expect((await engine.status(id)).pauseExit).toBeUndefined();
    await engine.remove(id);
    expect(await stateUnder('crun', id)).toBeUndefined();
    expect(processesMentioning([id])).toEqual([]);
    await engine.close();
  });

  it('a runc pod is unchanged: runc’s root knows its pause, crun’s does not', async () => {
    const engine = await env.engine();
    const { id } = await engine.run({ config: pod('on-runc') });
    const pid = (await engine.status(id)).pause.pid!;
    expect(await stateUnder('runc', id)).toMatchObject({ status: 'running', pid });
    expect(await stateUnder('crun', id)).toBeUndefined();
    expect(await steps(engine, id, 'run')).toEqual(expect.arrayContaining(['conmon.create', 'runc.start']));
    await engine.remove(id);
    expect(await stateUnder('runc', id)).toBeUndefined();
    expect(processesMentioning([id])).toEqual([]);
    await engine.close();
  });

  it('after a restart a crun pod is found on crun, and a record from before (no pause location: runc) is still stopped and removed', async () => {
    const first = await env.engine();
    const { id: onCrun } = await first.run({ config: pod('keep-crun'), runtimeHandler: 'crun' });
    const { id: old } = await first.run({ config: pod('old-record') });
    await first.close();
    // what the engine before this change wrote: no pauseRuntime, every pause under <runDir>/runc
    const file = join(env.dir, 'state', 'store', `${old}.json`);
    const raw = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    delete raw.pauseRuntime;
    await writeFile(file, JSON.stringify(raw));

    const second = await env.engine();
    expect((await second.info()).problems ?? []).toEqual([]);
    expect((await second.status(onCrun)).state).toBe('SANDBOX_READY');
    expect((await second.status(old)).state).toBe('SANDBOX_READY');
    for (const id of [onCrun, old]) {
      await second.stop(id);
      await second.remove(id);
    }
    expect(await stateUnder('crun', onCrun)).toBeUndefined();
    expect(await stateUnder('runc', old)).toBeUndefined();
    expect(processesMentioning([onCrun, old])).toEqual([]);
    await second.close();
  });

  it('the start-up sweep kills and deletes an orphaned crun pause of ours, found by its owner annotation (read from its bundle: crun lists none)', async () => {
    const first = await env.engine();
    const config = { ...pod('orphan'), hostname: '', linux: { security_context: { namespace_options: { network: 2 } } } };
    const { id } = await first.run({ config, runtimeHandler: 'crun' });
    await first.close();
    // the record goes behind the engine's back: the pause is ours with no record
    await rm(join(env.dir, 'state', 'store', `${id}.json`));
    const second = await env.engine();
    try {
      const gc = (await second.info()).startupGc ?? [];
      expect(gc).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'runc-container', id, action: expect.stringMatching(/^killed and deleted/) }),
        ]),
      );
      expect(await stateUnder('crun', id)).toBeUndefined();
      expect(processesMentioning([id])).toEqual([]);
    } finally {
      await second.close();
      // what only the lost record named: its files and shm
      await removeSandboxFiles(runner, sandboxPaths(join(env.dir, 'state'), join(env.dir, 'run'), id));
    }
  });
});
