import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';
import { readContainerConfig, readPodConfig } from '../container-config-file';

export const help = `podscope run [flags] CONTAINER_CONFIG POD_CONFIG
  Runs a pod sandbox, creates the container in it and starts it; prints the container id.
  --runtime, -r HANDLER   runtime handler for the pod: runc (the default, also "") or crun`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { runtime: { type: 'string', short: 'r' } });
  if (positionals.length !== 2) throw new PodscopeError('InvalidArgument', 'run takes CONTAINER_CONFIG POD_CONFIG');
  const config = await readContainerConfig(positionals[0]!);
  const sandboxConfig = await readPodConfig(positionals[1]!);
  const id = await withApi(flags, async (api) => {
    const pod = await api.run({ config: sandboxConfig, runtimeHandler: (flags.runtime as string | undefined) ?? '' });
    const { id } = await api.createContainer({ podSandboxId: pod.id, config, sandboxConfig });
    await api.startContainer(id);
    return id;
  });
  process.stdout.write(`${id}\n`);
  return 0;
}
