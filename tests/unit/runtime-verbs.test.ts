/**
 * The runtime verbs one implementation serves to pauses and app containers alike (runtime/container-runtime.ts), over a
 * runner that answers as runc or crun would: list with annotations (crun's list carries none: read from the bundle),
 * state, and stop/delete reported under the handler's name with the runtime's own words on failure.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConmonContainerRuntime } from '../../electron/engine/runtime/conmon';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { ociRuntimeBinary, type RuntimeHandlerName } from '../../electron/engine/runtime/oci-runtime';
import type { StepReport } from '../../electron/engine/common/step-report';

type Answer = Partial<Pick<ExecResult, 'exitCode' | 'stdout' | 'stderr'>>;

class ScriptedRunner implements ProcessRunner {
  readonly runs: string[][] = [];
  constructor(private readonly answer: (args: string[]) => Answer) {}
  async run(req: ExecRequest): Promise<ExecResult> {
    const argv = [req.file, ...(req.args ?? [])];
    this.runs.push(argv);
    const a = this.answer(req.args ?? []);
    return {
      command: argv.join(' '),
      exitCode: a.exitCode ?? 0,
      signal: null,
      stdout: a.stdout ?? '',
      stderr: a.stderr ?? '',
      durationMs: 0,
      timedOut: false,
      canceled: false,
    };
  }
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pph-verbs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function runtimeOf(handler: RuntimeHandlerName, answer: (args: string[]) => Answer, root = join(dir, handler)) {
  const runner = new ScriptedRunner(answer);
  const runtime = new ConmonContainerRuntime({ binary: ociRuntimeBinary(handler, { runcPath: 'runc', crunPath: 'crun' }), root, runner });
  return { runner, runtime };
}

describe('the runtime verbs shared by pauses and app containers', () => {
  it("lists annotations from runc's list, and from the bundle's config.json where crun's list has none", async () => {
    const bundle = join(dir, 'bundle');
    await mkdir(bundle);
    await writeFile(join(bundle, 'config.json'), JSON.stringify({ annotations: { 'io.podscope.state-dir-id': 'abc' } }));
    await mkdir(join(dir, 'crun'));
    const crun = runtimeOf('crun', () => ({ stdout: JSON.stringify([{ id: 'p1', pid: 9, status: 'running', bundle }]) }));
    expect(await crun.runtime.listContainers()).toEqual([
      { id: 'p1', status: 'running', annotations: { 'io.podscope.state-dir-id': 'abc' } },
    ]);
    await mkdir(join(dir, 'runc'));
    const runc = runtimeOf('runc', () => ({ stdout: JSON.stringify([{ id: 'p2', status: 'stopped', bundle, annotations: { a: 'b' } }]) }));
    expect(await runc.runtime.listContainers()).toEqual([{ id: 'p2', status: 'stopped', annotations: { a: 'b' } }]);
    // runc says `null` for an empty root
    const empty = runtimeOf('runc', () => ({ stdout: 'null' }));
    expect(await empty.runtime.list()).toEqual([]);
  });

  it('a root that does not exist holds no container: list and state run no runtime process (runc would create the root)', async () => {
    const { runner, runtime } = runtimeOf('runc', () => ({}), join(dir, 'absent'));
    expect(await runtime.listContainers()).toEqual([]);
    expect(await runtime.state('p1')).toBeUndefined();
    expect(runner.runs).toEqual([]);
  });

  it("state: the runtime's answer, undefined in crun's words for an unknown id", async () => {
    await mkdir(join(dir, 'crun'));
    const { runtime } = runtimeOf('crun', (args) =>
      args.includes('known')
        ? { stdout: JSON.stringify({ id: 'known', pid: 12, status: 'running', bundle: '/b', owner: 'root' }) }
        : { exitCode: 1, stderr: `error opening file \`${join(dir, 'crun')}/gone/status\`: No such file or directory` },
    );
    expect(await runtime.state('known')).toEqual({ id: 'known', pid: 12, status: 'running', bundle: '/b' });
    expect(await runtime.state('gone')).toBeUndefined();
  });

  it('stop and delete of a container crun does not know: reported as crun steps, a success, no wait', async () => {
    await mkdir(join(dir, 'crun'));
    const { runner, runtime } = runtimeOf('crun', () => ({
      exitCode: 1,
      stderr: `error opening file \`${join(dir, 'crun')}/p1/status\`: No such file or directory`,
    }));
    const steps: StepReport[] = [];
    await runtime.stop('p1', { report: (s) => steps.push(s) });
    await runtime.delete('p1', { report: (s) => steps.push(s) });
    expect(steps.map((s) => [s.step, s.label, s.ok])).toEqual([
      ['crun.kill', 'crun kill', true],
      ['crun.delete', 'crun delete', true],
    ]);
    expect(runner.runs.map((r) => r.slice(3))).toEqual([
      ['kill', '--all', 'p1', 'KILL'],
      ['delete', '--force', 'p1'],
    ]);
    expect(String(steps[0]!.detail?.command)).toContain(`crun --root ${join(dir, 'crun')} kill --all p1 KILL`);
  });

  it("a failed delete is a RuntimeError in the runtime's own words, reported failed", async () => {
    const { runtime } = runtimeOf('runc', () => ({
      exitCode: 1,
      stderr: '{"level":"error","msg":"cannot delete: device or resource busy","time":"2026-01-01T00:00:00Z"}\n',
    }));
    const steps: StepReport[] = [];
    const err = await runtime.delete('p1', { report: (s) => steps.push(s) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'RuntimeError', message: 'runc delete failed: cannot delete: device or resource busy' });
    expect(steps.map((s) => [s.step, s.ok])).toEqual([['runc.delete', false]]);
  });
});
