import { PodscopeError } from '../../../shared/domain/errors';
import type { NodeNamespace, NodeView } from '../../../shared/domain/nodes';
import { parseCommandArgs } from '../args';
import { table } from '../format';

export const help = `podscope nodes [flags]
  Lists every CRI runtime on this machine as a node: the well-known sockets (containerd, CRI-O, k3s, a Podscope
  daemon) and runtimes in other namespaces (a kind node's containerd, reached through /proc/<pid>/root), each with
  its name, endpoint, runtime and version, namespaces, addresses and pod subnets. Only looks: asks each socket CRI
  Version and reads /proc.
  -o table|json`;

/** "host", or the namespace's inode when it is the node's own */
const nsText = (n: NodeNamespace) => (n.host ? 'host' : (/\[(\d+)\]/.exec(n.id)?.[1] ?? n.id));

function namespacesText(n: NodeView): string {
  const own = (['mnt', 'pid', 'uts'] as const).filter((k) => !n.namespaces[k].host);
  return own.length ? `${nsText(n.namespaces.net)} (own ${own.join(',')})` : nsText(n.namespaces.net);
}

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' } });
  const output = (flags.output as string | undefined) ?? 'table';
  if (output !== 'table' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be table or json, not ${JSON.stringify(output)}`);
  const { discoverHostNodes } = await import('../../endpoints/nodes');
  const found = await discoverHostNodes();
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(
    `${table(
      ['NAME', 'RUNTIME', 'ENDPOINT', 'NETNS', 'PID', 'ADDRESSES', 'POD SUBNETS'],
      found.nodes.map((n) => [
        n.name,
        `${n.runtimeName} ${n.runtimeVersion}`,
        n.endpoint,
        namespacesText(n),
        n.pid === undefined ? '-' : n.nsPid === undefined ? String(n.pid) : `${n.pid} (${n.nsPid} inside)`,
        n.addresses.map((a) => a.cidr).join(',') || '-',
        n.podSubnets.map((s) => s.cidr).join(',') || '-',
      ]),
    )}\n`,
  );
  for (const r of found.refused) process.stderr.write(`not a CRI runtime: ${r.endpoint}${r.pid ? ` (pid ${r.pid})` : ''}: ${r.reason}\n`);
  return 0;
}
