/**
 * ExecSync (containerd internal/cri/server/container_execsync.go): `runc exec --process` in a running container, stdout,
 * stderr and the exit code; a timeout (seconds, 0 = none) kills the command and is DeadlineExceeded.
 */
import type { ExecSyncResult } from '../../../shared/domain/container';
import { PodscopeError } from '../../../shared/domain/errors';
import type { ContainerOciSpec } from '../runtime/container-spec';
import { runtimeFor, type ContainerContext } from './context';
import { observeExit } from './exit';
import { toCriContainerState } from './view';

/** what a runaway command may print before the rest is cut (the CRI message limit is 16 MiB) */
const MAX_OUTPUT = 8 * 1024 * 1024;

export async function execSync(ctx: ContainerContext, idOrPrefix: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
  const rec = ctx.store.get(idOrPrefix);
  if (cmd.length === 0) throw new PodscopeError('InvalidArgument', 'cmd must not be empty');
  if (rec.state === 'Running') await ctx.locks.tryRun(rec.id, () => observeExit(ctx, rec));
  if (rec.state !== 'Running')
    throw new PodscopeError('FailedPrecondition', `container ${JSON.stringify(rec.id)} is in ${toCriContainerState(rec.state)} state`);
  // the container's own process with args replaced, as containerd's ExecSync: user, groups, env, cwd, capabilities
  const spec = rec.ociSpec as ContainerOciSpec;
  const proc = { ...spec.process, args: [...cmd], terminal: false };
  const r = await runtimeFor(ctx, rec.runtimeHandler).exec(rec.id, proc, Math.max(0, timeoutSeconds) * 1000);
  return { stdout: r.stdout.subarray(0, MAX_OUTPUT), stderr: r.stderr.subarray(0, MAX_OUTPUT), exitCode: r.exitCode };
}
