/**
 * StartContainer (containerd internal/cri/server/container_start.go): only a CREATED container in a READY pod starts.
 * The runtime's container is made here (under conmon: `<runtime> create`, then `start`), as containerd makes its task here. A failed
 * start deletes what runc left and marks the container EXITED with reason StartError and exit code 128, as containerd.
 */
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import { DEFAULT_RUNTIME_HANDLER } from '../runtime/oci-runtime';
import { StepRecorder } from '../common/steps';
import { runtimeFor, type ContainerContext } from './context';
import { readySandbox } from './create';
import { toContainerSummary, toCriContainerState } from './view';

export async function startContainer(ctx: ContainerContext, idOrPrefix: string): Promise<void> {
  const rec = ctx.store.get(idOrPrefix);
  await ctx.locks.run(rec.id, async () => {
    if (rec.state !== 'Created')
      throw new PodscopeError('FailedPrecondition', `container ${JSON.stringify(rec.id)} is in ${toCriContainerState(rec.state)} state`);
    readySandbox(ctx, rec.sandboxId);
    const runtime = runtimeFor(ctx, rec.runtimeHandler);
    // a record of an older engine has no steps yet; the start's are added to create's
    const trace = new StepRecorder({ trace: (rec.trace ??= []) }, 'start', () => undefined);
    const handler = rec.runtimeHandler || DEFAULT_RUNTIME_HANDLER;
    try {
      // the runtime reports its own commands (conmon's create, the runtime's start) as they end; this step spans them
      const started = await trace.step(
        'runtime.start',
        `start under conmon on ${handler}`,
        () =>
          runtime.start(
            rec.id,
            rec.bundleDir,
            rec.ociSpec,
            { logPath: rec.logPath, stdin: rec.config.stdin, stdinOnce: rec.config.stdin_once, tty: rec.config.tty },
            { report: (step) => trace.add(step) },
          ),
        (s) => ({ pid: s.pid, monitorPid: s.monitorPid }),
      );
      rec.pid = started.pid;
      rec.monitorPid = started.monitorPid;
      rec.startTicks = await ctx.processStartTicks(started.pid);
      rec.state = 'Running';
      rec.startedAtNs = (BigInt(Date.now()) * 1_000_000n).toString();
    } catch (error) {
      await runtime.delete(rec.id).catch(() => undefined);
      rec.state = 'Exited';
      rec.exitCode = 128;
      rec.reason = 'StartError';
      rec.message = (error as Error).message;
      rec.finishedAtNs = (BigInt(Date.now()) * 1_000_000n).toString();
      rec.lastError = serializeError(error);
      throw new PodscopeError(
        error instanceof PodscopeError ? error.code : 'RuntimeError',
        `failed to start container ${JSON.stringify(rec.id)}: ${(error as Error).message}`,
        { cause: error },
      );
    } finally {
      await ctx.store.save(rec);
      ctx.emit({ type: 'container.changed', id: rec.id, summary: toContainerSummary(rec) });
    }
  });
}
