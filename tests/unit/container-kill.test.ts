/**
 * The runtime's kill without a runtime process (runtime/container-runtime.ts signalDirectly): the recorded init itself, or
 * with `all` every process of the container's cgroup; the runtime's own `kill` wherever the host cannot.
 */
import { describe, expect, it } from 'vitest';
import { ConmonContainerRuntime } from '../../electron/engine/runtime/conmon';
import type { HostProcessKiller, KillTarget } from '../../electron/engine/runtime/container-runtime';
import { ScriptedRunner } from '../../testkit/fakes/scripted-runner';
import { ociRuntimeBinary } from '../../electron/engine/runtime/oci-runtime';

const TARGET: KillTarget = { pid: 100, startTicks: 7, cgroupsPath: '/podscope/pod/c1' };
const RUNTIME_KILL_ALL = ['runc', '--root', '/run/podscope-test', 'kill', '--all', 'c1', 'KILL'];

/** a host where pid 100 (started at tick 7) runs; `procs` answers each read of the cgroup in turn */
function setup(procs?: (pass: number) => number[] | undefined) {
  const sent: [number, string][] = [];
  let reads = 0;
  const killer: HostProcessKiller = {
    signal: (pid, signal) => void sent.push([pid, signal]),
    processAlive: async (pid, ticks) => pid === 100 && (ticks === undefined || ticks === 7),
    ...(procs ? { procs: async () => procs(reads++) } : {}),
  };
  const runner = new ScriptedRunner();
  const runtime = new ConmonContainerRuntime({
    binary: ociRuntimeBinary('runc', { runcPath: 'runc' }),
    root: '/run/podscope-test',
    runner,
    killer,
  });
  return { sent, runner, runtime };
}

describe("the runtime's kill", () => {
  it('signals the recorded init itself (its pid and start time checked), with no runtime process', async () => {
    const { sent, runner, runtime } = setup(() => [100]);
    await runtime.kill('c1', 'SIGQUIT', false, TARGET);
    expect(sent).toEqual([[100, 'SIGQUIT']]);
    // a pid now another process's (other start time) is a container already gone: nothing to signal
    await runtime.kill('c1', 'SIGTERM', false, { ...TARGET, startTicks: 8 });
    expect(sent).toEqual([[100, 'SIGQUIT']]);
    expect(runner.argvs).toEqual([]);
  });

  it('with all, signals every process of the cgroup, reading it again until no new one appears', async () => {
    const { sent, runner, runtime } = setup((pass) => (pass === 0 ? [100, 4242] : [100, 4242, 5555]));
    await runtime.kill('c1', 'SIGKILL', true, TARGET);
    expect(sent).toEqual([
      [100, 'SIGKILL'],
      [4242, 'SIGKILL'],
      [5555, 'SIGKILL'],
    ]);
    expect(runner.argvs).toEqual([]);
  });

  it("is the runtime's kill where the host cannot: an unreadable cgroup, no cgroup reader, no known pid, a signal Node does not name, processes still appearing, no target", async () => {
    const cases: [string, ReturnType<typeof setup>, KillTarget | undefined, string][] = [
      ['an unreadable cgroup', setup(() => undefined), TARGET, 'SIGKILL'],
      ['no cgroup reader', setup(), TARGET, 'SIGKILL'],
      ['no known pid', setup(() => [100]), { cgroupsPath: TARGET.cgroupsPath }, 'SIGKILL'],
      ['processes still appearing', setup((pass) => [100, 6000 + pass]), TARGET, 'SIGKILL'],
      ['no target', setup(() => [100]), undefined, 'SIGKILL'],
    ];
    for (const [why, { runner, runtime }, target, signal] of cases) {
      await runtime.kill('c1', signal, true, target);
      expect(runner.argvs, why).toEqual([RUNTIME_KILL_ALL]);
    }
    const { sent, runner, runtime } = setup(() => [100]);
    await runtime.kill('c1', 'SIGNOSUCH', false, TARGET);
    expect(sent).toEqual([]);
    expect(runner.argvs).toEqual([['runc', '--root', '/run/podscope-test', 'kill', 'c1', 'NOSUCH']]);
  });
});
