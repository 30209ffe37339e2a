import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';
import { readContainerConfig, readPodConfig } from '../container-config-file';

export const help = `podscope create [flags] POD_ID CONTAINER_CONFIG POD_CONFIG
  Creates a container in a pod sandbox from crictl's config files (JSON or YAML) and prints its id.`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv);
  if (positionals.length !== 3) throw new PodscopeError('InvalidArgument', 'create takes POD_ID CONTAINER_CONFIG POD_CONFIG');
  const [podId, containerFile, podFile] = positionals as [string, string, string];
  const config = await readContainerConfig(containerFile);
  const sandboxConfig = await readPodConfig(podFile);
  const { id } = await withApi(flags, (api) => api.createContainer({ podSandboxId: podId, config, sandboxConfig }));
  process.stdout.write(`${id}\n`);
  return 0;
}
