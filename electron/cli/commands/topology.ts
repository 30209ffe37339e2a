/**
 * `podscope topology ID [-o text|json]`: how the pod is wired, read from the kernel now — every link in its netns and
 * where each leads on the host (veth peer, bridge, macvlan/ipvlan/vlan parent, the host's route to it, the ifb its
 * veth redirects to), each edge with the plugin that made it. Text is a tree from each pod link; json is the
 * PodTopology the app draws.
 */
import { PodscopeError, notSupported } from '../../../shared/domain/errors';
import type { PodTopology, TopologyEdge, TopologyNode } from '../../../shared/domain/topology';
import { withEndpoint } from '../api';
import { parseCommandArgs } from '../args';
import { chosenNodes, NODE_FLAGS, NODE_FLAGS_HELP, withNodesMeasurer } from '../nodes';

export const help = `podscope topology [flags] ID
  Reads the pod's wiring from the kernel (ip -d -j addr in its netns and on the host, ip -j route, bridge -j link,
  tc -j filter on its host veths) and prints it as a tree from each link in the pod's netns: veth peers (matched by
  ifindex both ways), bridge ports, macvlan/ipvlan/vlan parents, the host's /32 routes to the pod (ptp), tc redirects
  to an ifb (bandwidth), links host-device moved in (with their name on the host). [plugin/network] is the plugin
  whose recorded ADD result first listed the interface: it comes from the pod's CNI results, not from the kernel.
  -o text|json
${NODE_FLAGS_HELP}: the pod is found on its node and read there — "host" is that node's netns (a kind node's own)`;

const addrs = (n: TopologyNode) =>
  n.addresses
    .filter((a) => a.scope !== 'link')
    .map((a) => `${a.address}/${a.prefixLen}`)
    .join(', ');

function describeNode(n: TopologyNode): string {
  if (n.kind === 'host') return 'host stack';
  const kind = [n.linkKind, n.mode, n.vlanId !== undefined ? `id ${n.vlanId}` : undefined].filter(Boolean).join(' ');
  const parts = [
    `${n.netns === 'host' ? 'host ' : ''}${n.name}${kind ? ` (${kind})` : ''}`,
    addrs(n),
    n.state,
    n.master ? `port of ${n.master}` : '',
    n.hairpin !== undefined ? `hairpin ${n.hairpin ? 'on' : 'off'}` : '',
    n.kind === 'host-device' ? `moved in by host-device${n.originalName ? `, was ${n.originalName} on the host` : ''}` : '',
    n.owner ? `[${n.owner.plugin}/${n.owner.network}]` : '',
  ];
  return parts.filter(Boolean).join('  ');
}

function describeEdge(e: TopologyEdge): string {
  return `─${e.kind}${e.detail ? ` ${e.detail}` : ''}→`;
}

/** The tree: each pod link (lo last), then what it leads to, depth first; a node met again is named, not repeated. */
export function describeTopology(t: PodTopology): string {
  const byId = new Map(t.nodes.map((n) => [n.id, n]));
  const out = new Map<string, TopologyEdge[]>();
  for (const e of t.edges) out.set(e.from, [...(out.get(e.from) ?? []), e]);
  const seen = new Set<string>();
  const lines = [`Topology of ${t.id}, read from the kernel at ${t.readAt}`];
  const walk = (id: string, depth: number) => {
    seen.add(id);
    for (const e of out.get(id) ?? []) {
      const to = byId.get(e.to);
      if (!to) continue;
      const owner = e.owner ? `  [${e.owner.plugin}/${e.owner.network}]` : '';
      const again = seen.has(to.id);
      lines.push(
        `${'  '.repeat(depth)}${describeEdge(e)} ${again ? `${to.netns === 'host' && to.kind !== 'host' ? 'host ' : ''}${to.name} (above)` : describeNode(to)}${owner}`,
      );
      if (!again) walk(to.id, depth + 1);
    }
  };
  const roots = t.nodes
    .filter((n) => n.kind === 'pod-if' || n.kind === 'host-device')
    .sort((a, b) => (a.name === 'lo' ? 1 : 0) - (b.name === 'lo' ? 1 : 0) || a.name.localeCompare(b.name));
  const netns = roots[0]?.netns;
  if (netns) lines.push(`pod netns ${netns}`);
  for (const r of roots) {
    if (seen.has(r.id)) continue;
    lines.push(`  ${describeNode(r)}`);
    walk(r.id, 2);
  }
  if (t.errors.length > 0) lines.push(`Not read (the picture lacks what these would have shown):`, ...t.errors.map((e) => `  ${e}`));
  lines.push('[plugin/network]: the plugin whose recorded ADD result first listed it (from the CNI results, not the kernel)');
  return `${lines.join('\n')}\n`;
}

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(argv, { output: { type: 'string', short: 'o' }, ...NODE_FLAGS }, { manyEndpoints: true });
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'topology needs exactly one sandbox id');
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const nodes = await chosenNodes(flags);
  const t = nodes
    ? await withNodesMeasurer(nodes, flags, (m) => m.topology(positionals[0]!))
    : await withEndpoint(
        flags,
        ({ measurements }) => {
          if (!measurements)
            throw notSupported('measurements', "topology needs Podscope's own engine: a CRI endpoint does not show its kernel");
          return measurements.topology(positionals[0]!);
        },
        'read',
      );
  process.stdout.write(output === 'json' ? `${JSON.stringify(t, null, 2)}\n` : `${t.node ? `node ${t.node}\n` : ''}${describeTopology(t)}`);
  return 0;
}
