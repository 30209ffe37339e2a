import { writeFileSync } from 'node:fs';
import { PodscopeError } from '../../../shared/domain/errors';
import {
  describeMtu,
  dnsPaths,
  failingPaths,
  failureText,
  measuredByText,
  networkDetail,
  pathsByNetwork,
  probeSucceeded,
  type PathTrace,
  type ProbePath,
  type ProbeReport,
  type ProbeVerdict,
} from '../../../shared/domain/probe';
import type { ProbeMatrix } from '../../../shared/domain/nodes';
import type { ThroughputReport } from '../../../shared/domain/measure';
import { withEndpoint } from '../api';
import { parseCommandArgs, type Flags } from '../args';
import { chosenNodes, NODE_FLAGS, NODE_FLAGS_HELP, withNodesMeasurer, type ChosenNode } from '../nodes';
import { describeThroughput, measureThroughputVia, throughputExitCode, throughputJson } from './throughput';

export const help = `podscope probe [flags] ID
podscope probe --matrix (--all-nodes | --endpoint A --endpoint B …)
  Measures reachability with real packets on every network the pod is attached to (eth0, eth1, …): each mapped
  host port from the host (127.0.0.1, the gateway address of each network whose chain has portmap, host_ip),
  container-port-only mappings on each pod IP, each network's gateway, and the ready peers on each network, both
  ways; and a DNS path to each of the pod's nameservers (its dns_config, else its resolv.conf): a real query from
  inside the pod over UDP, TCP when the answer is truncated or UDP refused; any answer (NXDOMAIN too) is reachable,
  with the rcode and the records; a REFUSED rcode is refused. Paths are listed per network and interface. Exit 0 when every applicable path is reachable (isolated ones
  aside), else 5 (FailedPrecondition) naming the failures.
  verdicts: reachable, shadowed (another pod answered), refused (a RST came back), timeout (nothing came back),
  unreachable (connect() failed at once with a route error: ENETUNREACH, EHOSTUNREACH, EINVAL from a blackhole,
  EACCES from a prohibit route), isolated (sent, no answer, on a path the plugin's design forbids: a macvlan/ipvlan
  child and its parent's own addresses, the host and a pod on a network with no host leg; \`why\` names the plugin
  and the rule; never a failure), notApplicable (not measured, with the reason).
  --trace        follow each path's own connection (a source port chosen before connecting) through the kernel, in
                 every netns it crosses: route decisions (ip route get), each netfilter rule it hit (TRACE rules in the
                 raw table + nft monitor trace), who installed that rule (portmap/bridge/firewall for a network
                 and pod of this engine, or nobody), the conntrack entry, where it ended; and one sentence why.
                 Needs root, iptables on nf_tables, nft, stdbuf; conntrack is used when installed (the trace says
                 what it lacked).
                 seen-at: tcpdump on every hop of each path (the pod's eth0, its host veth, the bridge), filtered on
                 the flow's source port: a seen step per hop and direction, so a drop outside netfilter (a qdisc, a
                 down bridge port) is located between the last hop that saw the packets and the first that did not;
                 drop: where the kernel freed packets while the trace ran and why (skb:kfree_skb in a tracefs instance
                 of its own; tracefs is mounted when it is not; the trace says when it is unavailable).
                 Needs tcpdump for seen-at; every TRACE rule, raw table, tracefs instance and capture is removed before
                 the probe returns (a start-up sweep removes those of a killed engine).
  --pcap FILE    with --trace: write every hop's capture as one pcapng (an interface per hop, "<netns>/<if>"; at
                 most 128 bytes of each packet and 1000 packets per hop) for Wireshark
  MTU: beside the connects, each path's MTU is audited with ICMP echoes of chosen sizes with DF set (ping -M do,
  bisected between 576 (IPv6: 1280) and the pod interface's MTU), and the narrowest link on the path read from the
  kernel (veth peers, bridge, the host's device toward the destination, routes with an mtu): a size the interface
  allows that vanishes without ICMP "fragmentation needed" is a black hole and fails the path; a smaller MTU that
  PMTU discovery reports is shown, not failed.
  --dns-name NAME  the name each of the pod's nameservers is asked on its DNS path (default: kubernetes.default.svc.<domain>
                 when the search domains look like a cluster's, else the first search domain, else the root's NS)
  --throughput   then a bulk TCP transfer each way past the tbf burst (see \`podscope throughput\`); the exit code also
                 fails when a transfer failed or a requested limit did not hold
  -o text|json   json: {sandboxId, measuredAt, measuredBy, traced?, networks: [{network, interface, plugins,
                 linkKind?, parent?, peers?}], paths: [{kind, network, interface, from, to, proto, verdict, rttMs?,
                 answeredBy?, why?, dns?: {server, name, qtype, transport, truncated?, rcode, answers},
                 mtu?: {pathMtu?, interfaceMtu, blackHole, pmtud?, at?: {node, netns, interface, mtu}, probes, note}, trace?: {flow: {sport, dst, dport}, missing: [], partial?, capture?, steps: [{kind: gap|route|netfilter|
                 conntrack|drop|seen|deliver, netns: host|<sandbox id>, family, table?, chain?, rule?, handle?, verdict?,
                 owner?: {plugin, network?, sandboxId?}|null, interface?, seen?, reply?, decisive?, detail}]}}],
                 capture?: {interfaces, packets, pcapngBase64: "" (the bytes go to --pcap)},
                 throughput?: {ingress: {requestedBps, measuredBps, burstBytes, …}, egress: {…}}}
${NODE_FLAGS_HELP}: the pod is found on whichever node has it and probed there (host-side paths in that
                 node's netns), then across the nodes: pod → each other node's pods and back, pod → each other node's
                 host ports at that node's addresses, each other node → the pod; every path names fromNode and toNode
                 (json: node, nodes, paths[].fromNode/toNode, trace steps' node). A failed path between nodes whose
                 node lacks the route to the other node's pod subnet names that node and route (why, and a route step
                 with --trace); with --trace each path crosses both nodes' netns, rule by rule.
  --matrix       every pod × every pod of the chosen nodes, grouped by node: one connect per ordered pair, each cell
                 its verdict (. reachable, R refused, T timeout, U unreachable, S shadowed, I isolated); the failing
                 cells listed with why. With --trace each cell is traced. -o json: {measuredAt, durationMs, nodes,
                 pods: [{id, name, node, ip}], cells: [{from, to, fromNode, toNode, verdict, rttMs?, note, why?,
                 trace?}], errors}. Exit 5 when a cell is not reachable.`;

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(
    argv,
    {
      output: { type: 'string', short: 'o' },
      throughput: { type: 'boolean' },
      trace: { type: 'boolean' },
      pcap: { type: 'string' },
      'dns-name': { type: 'string' },
      matrix: { type: 'boolean' },
      ...NODE_FLAGS,
    },
    { manyEndpoints: true },
  );
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const nodes = await chosenNodes(flags);
  if (flags.matrix) {
    if (!nodes) throw new PodscopeError('InvalidArgument', '--matrix needs --all-nodes or --endpoint given more than once');
    if (positionals.length !== 0) throw new PodscopeError('InvalidArgument', '--matrix takes no sandbox id: it probes every pod');
    return runMatrix(nodes, flags, output);
  }
  if (positionals.length !== 1) throw new PodscopeError('InvalidArgument', 'probe takes exactly one sandbox id');
  if (nodes) {
    if (flags.throughput || flags.pcap !== undefined || flags['dns-name'] !== undefined)
      throw new PodscopeError('InvalidArgument', '--throughput, --pcap and --dns-name are for one node: give its --endpoint alone');
    const report = await withNodesMeasurer(nodes, flags, (m) => m.probe(positionals[0]!, flags.trace ? { trace: true } : {}));
    return finishProbe(report, undefined, output);
  }
  const pcap = flags.pcap as string | undefined;
  if (pcap !== undefined && (pcap === '' || !flags.trace))
    throw new PodscopeError('InvalidArgument', '--pcap takes a file name and needs --trace (the captures are made while tracing)');
  const { report, throughput } = await withEndpoint(flags, async ({ api, measurements }) => {
    const dnsName = flags['dns-name'] as string | undefined;
    if (dnsName !== undefined && !/^(\.|[A-Za-z0-9_-]{1,63}(\.[A-Za-z0-9_-]{1,63})*\.?)$/.test(dnsName))
      throw new PodscopeError('InvalidArgument', `--dns-name: ${JSON.stringify(dnsName)} is not a DNS name`);
    const opts = { ...(flags.trace ? { trace: true } : {}), ...(dnsName ? { dnsName } : {}) };
    const probe = await api.probe(positionals[0]!, Object.keys(opts).length ? opts : undefined);
    return { report: probe, throughput: flags.throughput ? await measureThroughputVia(measurements, probe.sandboxId) : undefined };
  });
  if (pcap !== undefined) {
    if (!report.capture)
      throw new PodscopeError('FailedPrecondition', `--pcap: nothing was captured (${report.errors.join('; ') || 'see the trace'})`);
    writeFileSync(pcap, Buffer.from(report.capture.pcapngBase64, 'base64'));
    process.stderr.write(
      `podscope probe: ${report.capture.packets} packets on ${report.capture.interfaces.length} hops written to ${pcap}\n`,
    );
  }
  return finishProbe(report, throughput, output);
}

function finishProbe(report: ProbeReport, throughput: ThroughputReport | undefined, output: string): number {
  // the pcapng is for --pcap (or the app's download), not for the JSON a script reads
  if (report.capture) report.capture = { ...report.capture, pcapngBase64: '' };
  // each path's own capture is in the probe's too: its bytes are left out of the JSON the same way
  for (const p of report.paths) if (p.trace?.capture) p.trace.capture = { ...p.trace.capture, pcapngBase64: '' };
  if (output === 'json')
    process.stdout.write(`${JSON.stringify(throughput ? { ...report, throughput: throughputJson(throughput) } : report, null, 2)}\n`);
  else process.stdout.write(describeProbe(report) + (throughput ? describeThroughput(throughput) : ''));
  const throughputCode = throughput ? throughputExitCode(throughput) : 0;
  if (probeSucceeded(report)) {
    if (throughputCode !== 0)
      process.stderr.write('podscope probe: FailedPrecondition: a throughput transfer failed or a requested limit did not hold\n');
    return throughputCode;
  }
  const failing = failingPaths(report);
  const what = failing.length ? failing.map(failureText).join('; ') : report.errors.join('; ') || 'no applicable path';
  process.stderr.write(`podscope probe: FailedPrecondition: not every path is reachable: ${what}\n`);
  return 5;
}

/** the text report: the paths per network and interface, each network with its plugin chain */
export function describeProbe(r: ProbeReport): string {
  const lines = [`Probe of ${r.sandboxId}, measured at ${r.measuredAt} by ${measuredByText(r)} in ${r.durationMs.toFixed(0)} ms`];
  for (const g of pathsByNetwork(r)) {
    if (g.network !== undefined) {
      const n = g.info;
      const how = n ? ` [${networkDetail(n).join(', ')}]` : '';
      lines.push(`  network ${g.network} (${g.interface ?? '?'})${how}`);
      if (n?.peers && n.peers.measured < n.peers.ready)
        lines.push(`    peers: the newest ${n.peers.measured} of ${n.peers.ready} ready peers on this network were measured`);
      if (g.paths.length === 0) lines.push('    (no path: nothing maps to or routes over this network)');
    }
    for (const { path } of g.paths) lines.push(...describePath(path, r.sandboxId));
  }
  const dns = dnsPaths(r);
  if (r.dns || dns.length) {
    const d = r.dns;
    const from = d ? (d.source === 'dns_config' ? "the pod's dns_config" : 'its resolv.conf') : 'the pod';
    lines.push(`  DNS (nameservers from ${from}${d ? `; asks ${d.qtype} ${d.name}` : ''})`);
    if (d && d.servers.length === 0) lines.push('    (no nameserver: the pod resolves no name)');
    for (const { path } of dns) lines.push(...describePath(path, r.sandboxId));
    if (d?.resolvConf !== undefined)
      lines.push(
        '    resolv.conf:',
        ...d.resolvConf
          .trimEnd()
          .split('\n')
          .map((l) => `      | ${l}`),
      );
  }
  // a report from before the probe named networks: its peers figure is eth0's
  if (!r.networks && r.peers && r.peers.measured < r.peers.ready)
    lines.push(`  peers: the newest ${r.peers.measured} of ${r.peers.ready} ready peers on the network were measured`);
  for (const e of r.errors) lines.push(`  !  ${e}`);
  return `${lines.join('\n')}\n`;
}

function describePath(p: ProbePath, sandboxId: string): string[] {
  const rtt = p.rttMs !== undefined ? ` ${p.rttMs.toFixed(2)} ms` : '';
  const by = p.answeredBy ? ` by ${p.answeredBy.slice(0, 12)}` : '';
  const nodes = p.fromNode !== undefined && p.fromNode !== p.toNode ? ` [${p.fromNode} → ${p.toNode}]` : '';
  // between pods: the network path (a port the probe picks) and the paths to the ports the pod declares, told apart
  const kind = p.kind === 'peer' ? 'peer-net' : p.kind;
  const out = [
    `    ${p.verdict.padEnd(13)} ${kind.padEnd(8)} ${p.from} → ${p.to}/${p.proto}${rtt}${by}${p.measured ? '' : ' (not measured)'}${nodes}  ${p.note}`,
  ];
  if (p.declaredBy) out.push(`      declared by ${p.declaredBy}`);
  if (p.mtu) out.push(`      ${p.mtu.blackHole ? '!! ' : ''}${describeMtu(p.mtu)}`);
  if (p.why) out.push(`      why: ${p.why}`);
  if (p.trace) out.push(...describeTrace(p.trace, sandboxId));
  return out;
}

/** the steps of a traced path, one per line, the deciding one marked with ▶ */
export function describeTrace(t: PathTrace, sandboxId: string): string[] {
  const short = (netns: string) =>
    netns === 'host' ? 'host' : netns.startsWith('node:') ? 'node' : netns === sandboxId ? 'pod' : netns.slice(0, 12);
  // a step on another node names it: "host" there is the node's netns
  const where = (netns: string, node?: string) => (node ? `${node}/${short(netns)}` : short(netns));
  const out = [`      trace: source port ${t.flow.sport} → ${t.flow.dst.includes(':') ? `[${t.flow.dst}]` : t.flow.dst}:${t.flow.dport}`];
  // a partial trace says what it lacks before anything it traced
  if (t.partial) for (const m of t.missing) out.push(`      (not traced: ${m})`);
  for (const s of t.steps) {
    const owner =
      s.owner === undefined
        ? ''
        : s.owner === null
          ? '  [owner: none]'
          : `  [owner: ${[s.owner.plugin, s.owner.network, s.owner.sandboxId?.slice(0, 12)].filter(Boolean).join(' · ')}]`;
    const rule = s.kind === 'netfilter' && s.rule ? `  ${s.rule}` : '';
    out.push(
      `      ${s.decisive ? '▶' : ' '} ${s.kind.padEnd(9)} ${where(s.netns, s.node).padEnd(12)} ${s.reply ? '← ' : ''}${s.detail}${owner}${rule}`,
    );
  }
  if (!t.partial) for (const m of t.missing) out.push(`      (not traced: ${m})`);
  return out;
}

const CELL: Record<ProbeVerdict, string> = {
  reachable: '.',
  refused: 'R',
  timeout: 'T',
  unreachable: 'U',
  shadowed: 'S',
  isolated: 'I',
  notApplicable: '-',
};

async function runMatrix(nodes: ChosenNode[], flags: Flags, output: string): Promise<number> {
  const matrix = await withNodesMeasurer(nodes, flags, (m) => m.matrix(flags.trace ? { trace: true } : {}));
  if (output === 'json') process.stdout.write(`${JSON.stringify(matrix, null, 2)}\n`);
  else process.stdout.write(describeMatrix(matrix));
  const failing = matrix.cells.filter((c) => c.verdict !== 'reachable');
  if (failing.length === 0 && matrix.cells.length > 0) return 0;
  process.stderr.write(
    `podscope probe --matrix: FailedPrecondition: ${failing.length ? `${failing.length} of ${matrix.cells.length} pod → pod paths are not reachable` : 'no pod pair to measure'}\n`,
  );
  return 5;
}

/** rows and columns grouped by node; a cell per ordered pair; then every failing cell with its why */
export function describeMatrix(m: ProbeMatrix): string {
  const lines = [
    `Probe matrix of ${m.pods.length} pods on ${m.nodes.length} nodes (${m.nodes.join(', ')}), measured at ${m.measuredAt} in ${m.durationMs.toFixed(0)} ms`,
  ];
  const cell = new Map(m.cells.map((c) => [`${c.from}>${c.to}`, c]));
  const label = (i: number) => String(i + 1);
  const nodeW = Math.max(4, ...m.pods.map((p) => p.node.length));
  const podW = Math.max(3, ...m.pods.map((p) => p.name.length));
  const colW = Math.max(2, String(m.pods.length).length + 1);
  lines.push(
    `  ${'#'.padStart(3)}  ${'NODE'.padEnd(nodeW)}  ${'POD'.padEnd(podW)}  ${m.pods.map((_, i) => label(i).padStart(colW)).join('')}`,
  );
  m.pods.forEach((from, i) => {
    const row = m.pods
      .map((to) => (to.id === from.id ? '' : CELL[cell.get(`${from.id}>${to.id}`)?.verdict ?? 'notApplicable']).padStart(colW))
      .join('');
    const newNode = i > 0 && m.pods[i - 1]!.node !== from.node;
    if (newNode) lines.push('');
    lines.push(`  ${label(i).padStart(3)}  ${from.node.padEnd(nodeW)}  ${from.name.padEnd(podW)}  ${row}`);
  });
  const nameOf = (id: string) => m.pods.find((p) => p.id === id)?.name ?? id.slice(0, 12);
  const failing = m.cells.filter((c) => c.verdict !== 'reachable');
  if (failing.length) lines.push('', '  not reachable:');
  for (const c of failing) {
    lines.push(`    ${c.verdict.padEnd(11)} ${nameOf(c.from)} (${c.fromNode}) → ${nameOf(c.to)} (${c.toNode})  ${c.note}`);
    if (c.why) lines.push(`      why: ${c.why}`);
    if (c.trace) lines.push(...describeTrace(c.trace, c.from));
  }
  for (const e of m.errors) lines.push(`  !  ${e}`);
  return `${lines.join('\n')}\n`;
}
