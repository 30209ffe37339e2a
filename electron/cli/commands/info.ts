import { PodscopeError } from '../../../shared/domain/errors';
import { POD_LOG_DIRECTORY_NOTE, type EngineInfo } from '../../../shared/domain/sandbox';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope info [flags]
  Shows the engine: version, directories, the runtime handlers a pod can ask for (runtime_handler, runp --runtime)
  with the version of each binary or what to install, and any problems.
  -o text|json`;

/** one line per handler: `runc (default)  runc version 1.1.5+ds1  /usr/bin/runc`, or what is missing */
export function formatRuntimeHandlers(info: EngineInfo): string[] {
  return (info.runtimeHandlers ?? []).map((h) => {
    const name = `${h.name}${h.default ? ' (default)' : ''}`.padEnd(16);
    return h.present ? `  ${name}${h.version ?? 'present'}  (${h.path})` : `  ${name}MISSING: ${h.problem ?? h.path}`;
  });
}

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' } });
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const info = await withApi(flags, (api) => api.info(), 'read');
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
    return 0;
  }
  const lines = [
    `version:     ${info.version}`,
    `state dir:   ${info.stateDir}`,
    `run dir:     ${info.runDir}`,
    `netns dir:   ${info.netnsDir}`,
    `CNI conf:    ${info.cniConfDir}`,
    `CNI cache:   ${info.cniCacheDir}`,
    `pod logs:    ${POD_LOG_DIRECTORY_NOTE}`,
    ...(info.hostLocalDirs ?? []).map(
      (d) => `host-local:  ${d.dir}  (network ${d.network}${d.defaulted ? ", host-local's default dataDir" : ', its ipam.dataDir'})`,
    ),
    'runtime handlers:',
    ...formatRuntimeHandlers(info),
    ...(info.problems.length > 0 ? ['problems:', ...info.problems.map((p) => `  ${p}`)] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
