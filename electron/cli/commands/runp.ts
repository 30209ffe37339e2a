import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { IP_PREFERENCES, type IpPreference } from '../../../shared/domain/config';
import { loadCrictlPodConfig } from '../../../shared/domain/crictl-format';
import { PodscopeError } from '../../../shared/domain/errors';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';

export const help = `podscope runp [flags] POD_CONFIG.(json|yaml)
  Runs a pod sandbox from a crictl pod-config file and prints its id.
  --runtime, -r HANDLER   runtime handler: runc (the default, also "") or crun
  --sandbox-ip-pref P     IP preference for this sandbox only (ipv4|ipv6|cni)`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { runtime: { type: 'string', short: 'r' }, 'sandbox-ip-pref': { type: 'string' } });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'runp takes exactly one pod-config file');
  const file = positionals[0]!;
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new PodscopeError('InvalidArgument', `cannot read ${file}: ${e.code ?? e.message}`);
  });
  const { config, warnings } = loadCrictlPodConfig(text, file, randomUUID);
  for (const w of warnings) process.stderr.write(`warning: ${file}: ${w}\n`);
  const pref = flags['sandbox-ip-pref'];
  if (pref !== undefined && !(IP_PREFERENCES as readonly string[]).includes(pref as string)) {
    throw new PodscopeError('InvalidArgument', `--sandbox-ip-pref must be one of ${IP_PREFERENCES.join(', ')}`);
  }
  const { id } = await withApi(flags, async (api) => {
    // warn before creating: the new pod's DNAT rule would come after the holder's, so it would never be reached
    const preview = await api.preview({ config }).catch(() => undefined);
    for (const c of preview?.hostPortConflicts ?? []) {
      const holders = c.holders.map((h) => `${h.name} (${h.id})`).join(', ');
      process.stderr.write(
        `warning: host port ${c.hostIP ? `${c.hostIP}:` : ''}${c.hostPort}/${c.protocol} is already mapped by ready sandbox ${holders}: its DNAT rule matches first, so connections will not reach the new pod\n`,
      );
    }
    return api.run({ config, runtimeHandler: (flags.runtime as string | undefined) ?? '', ipPreference: pref as IpPreference | undefined });
  });
  process.stdout.write(`${id}\n`);
  return 0;
}
