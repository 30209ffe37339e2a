import { PodscopeError } from '../../../shared/domain/errors';
import type { ContainerStatusView } from '../../../shared/domain/container';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope inspect [flags] ID...
  Shows containers: state and exit reason, pid, user, seccomp, log path; -o json is the full status with the OCI spec.
  -o text|json`;

const ns = (v: string) => (v && v !== '0' ? new Date(Number(BigInt(v) / 1_000_000n)).toISOString() : '-');

function describe(s: ContainerStatusView): string {
  const lines = [
    `Container ${s.id}`,
    `  name        ${s.name || s.metadata.name} (attempt ${s.metadata.attempt})`,
    `  pod         ${s.podSandboxId}`,
    `  image       ${s.image} (${s.imageRef})`,
    `  state       ${s.state.replace('CONTAINER_', '')}${s.state === 'CONTAINER_EXITED' ? `  exit ${s.exitCode} ${s.reason}${s.message ? `: ${s.message}` : ''}` : ''}`,
    `  created     ${ns(s.createdAtNs)}   started ${ns(s.startedAtNs)}   finished ${ns(s.finishedAtNs)}`,
    `  pid         ${s.pid ?? '-'}${s.monitorPid ? `   conmon ${s.monitorPid}` : ''}`,
    `  user        uid ${s.user.uid} gid ${s.user.gid} groups ${s.user.supplementalGroups.join(',') || '-'}`,
    `  seccomp     ${s.seccomp || '-'}   apparmor ${s.apparmor || '-'}   stop signal ${s.stopSignal || '-'}`,
    `  log         ${s.logPath || '(none: the pod has no log_directory or the config no log_path)'}`,
  ];
  for (const m of s.mounts) lines.push(`  mount       ${m.host_path} -> ${m.container_path}${m.readonly ? ' (ro)' : ''}`);
  return `${lines.join('\n')}\n`;
}

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' } });
  if (positionals.length === 0) throw new PodscopeError('InvalidArgument', 'inspect needs at least one container id');
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const views = await withApi(flags, (api) => Promise.all(positionals.map((id) => api.containerStatus(id))));
  if (output === 'json') process.stdout.write(`${JSON.stringify(views.length === 1 ? views[0] : views, null, 2)}\n`);
  else process.stdout.write(views.map(describe).join('\n'));
  return 0;
}
