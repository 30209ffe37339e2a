import { describePauseExit, describePendingEntry, whatStopReleases } from '../../../shared/domain/sandbox-release';
import { PodscopeError } from '../../../shared/domain/errors';
import { describeEffect, EFFECT_PLUGINS, type LiveNetworkView } from '../../../shared/domain/live';
import type { SandboxStatus } from '../../../shared/domain/sandbox';
import { withApi } from '../api';
import { parseCommandArgs } from '../args';
import { acrossNodes, chosenNodes, NODE_FLAGS, NODE_FLAGS_HELP, reportFailures, type ChosenNode } from '../nodes';

export const help = `podscope inspectp [flags] ID...
  Shows a sandbox: network, IP selection, port mappings, bandwidth, and what every CNI plugin received.
  -o text|json   (json is the full verbose status, trace included)
  --live         also read the kernel now: addresses in the netns, tbf rates, DNAT rules, checked against the config
  A ready pod that ran firewall, tuning, sbr or host-device always gets their effects read from the kernel (rules,
  sysctls, policy rules and tables, the moved link), each with its plugin, network and interface and the read time.
${NODE_FLAGS_HELP}: each ID is looked up on every chosen node and shown with its node; the pause pid a runtime in
  another pid namespace reports is also given as the host's pid (NSpid)`;

/** a ready pod whose ADD ran a plugin whose effect only the kernel shows */
function hasPluginEffects(s: SandboxStatus): boolean {
  return (
    s.state === 'SANDBOX_READY' &&
    !s.hostNetwork &&
    s.trace.some(
      (t) => t.step === 'cni.plugin' && t.plugin?.verb === 'ADD' && (EFFECT_PLUGINS as readonly string[]).includes(t.plugin.type),
    )
  );
}

export async function run(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandArgs(
    argv,
    { output: { type: 'string', short: 'o' }, live: { type: 'boolean' }, ...NODE_FLAGS },
    { manyEndpoints: true },
  );
  if (positionals.length === 0) throw new PodscopeError('InvalidArgument', 'inspectp needs at least one sandbox id');
  const output = (flags.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new PodscopeError('InvalidArgument', `-o must be text or json, not ${JSON.stringify(output)}`);
  const nodes = await chosenNodes(flags);
  if (nodes) return inspectAcrossNodes(nodes, positionals, output);
  const views = await withApi(
    flags,
    (api) =>
      Promise.all(
        positionals.map(async (id) => {
          const status = await api.status(id);
          // a stopped or host-network sandbox has no netns to read: say so instead of failing the whole command
          const read = flags.live || hasPluginEffects(status);
          const live = read ? await api.live(status.id).catch((e: unknown) => ({ unavailable: (e as Error).message })) : undefined;
          return { status, live, full: flags.live === true };
        }),
      ),
    'read',
  );
  if (output === 'json') {
    const docs = views.map((v) => {
      if (!v.live) return v.status;
      if (v.full) return { ...v.status, live: v.live };
      return 'unavailable' in v.live
        ? { ...v.status, pluginEffects: v.live }
        : { ...v.status, pluginEffects: { collectedAt: v.live.collectedAt, effects: v.live.pluginEffects ?? [] } };
    });
    process.stdout.write(`${JSON.stringify(docs.length === 1 ? docs[0] : docs, null, 2)}\n`);
  } else
    process.stdout.write(
      views.map((v) => formatStatus(v.status) + (v.live ? (v.full ? describeLive(v.live) : describeEffects(v.live)) : '')).join('\n'),
    );
  return 0;
}

interface NodeStatus {
  node: ChosenNode;
  status: SandboxStatus;
  /** the pause pid as the host numbers it, when the node's runtime reports pids of its own pid namespace */
  pauseHostPid?: number;
}

/** the status of a pod on whichever chosen node has it; NotFound when none does, InvalidArgument when several do */
async function findOnNodes(nodes: ChosenNode[], id: string): Promise<NodeStatus> {
  const answers = await acrossNodes(nodes, (api) => api.status(id));
  const hits = answers.filter((a) => a.value);
  if (hits.length > 1)
    throw new PodscopeError('InvalidArgument', `${id} names a pod on several nodes: ${hits.map((h) => h.node.name).join(', ')}`);
  const hit = hits[0];
  if (!hit) {
    reportFailures(answers.filter((a) => a.error !== undefined && !/not ?found/i.test(a.error)));
    throw new PodscopeError('NotFound', `no pod ${id} on ${nodes.map((n) => n.name).join(', ')}`);
  }
  const status = hit.value!;
  let pauseHostPid: number | undefined;
  if (hit.node.pid !== undefined && status.pause.pid) {
    const { hostPidOf, hostProcSource } = await import('../../endpoints/nodes');
    const mapped = hostPidOf(hostProcSource(), hit.node.pid, status.pause.pid);
    if (mapped !== undefined && mapped !== status.pause.pid) pauseHostPid = mapped;
  }
  return { node: hit.node, status, ...(pauseHostPid !== undefined && { pauseHostPid }) };
}

async function inspectAcrossNodes(nodes: ChosenNode[], ids: string[], output: string): Promise<number> {
  const found = await Promise.all(ids.map((id) => findOnNodes(nodes, id)));
  if (output === 'json') {
    const docs = found.map((f) => ({
      ...f.status,
      node: { name: f.node.name, endpoint: f.node.endpoint },
      ...(f.pauseHostPid !== undefined && { pauseHostPid: f.pauseHostPid }),
    }));
    process.stdout.write(`${JSON.stringify(docs.length === 1 ? docs[0] : docs, null, 2)}\n`);
  } else
    process.stdout.write(
      found
        .map(
          (f) =>
            `${'Node  '.padEnd(16)}${f.node.name} (${f.node.endpoint})\n` +
            (f.pauseHostPid !== undefined ? `${'Pause host pid  '.padEnd(16)}${f.pauseHostPid}\n` : '') +
            formatStatus(f.status),
        )
        .join('\n'),
    );
  return 0;
}

/** each plugin's effect with its owner; "kernel" ones were read at the view's time, "config" ones were not read */
function describeEffects(live: LiveNetworkView | { unavailable: string }): string {
  if ('unavailable' in live) return `Plugin effects: ${live.unavailable}\n`;
  const effects = live.pluginEffects ?? [];
  if (effects.length === 0) return '';
  return `${[`Plugin effects (kernel, read at ${live.collectedAt}):`, ...effects.map((e) => `  ${e.matches === false ? 'BAD' : 'ok '} ${describeEffect(e)}`)].join('\n')}\n`;
}

function describeLive(live: LiveNetworkView | { unavailable: string }): string {
  if ('unavailable' in live) return `Live:           ${live.unavailable}\n`;
  const lines = [`Live (kernel, ${live.collectedAt}):`];
  for (const i of live.interfaces)
    lines.push(`  ${i.name.padEnd(8)} ${i.state ?? ''} ${i.addresses.map((a) => `${a.address}/${a.prefixLen}`).join(', ')}`);
  for (const b of live.bandwidth) lines.push(`  ${b.matches ? 'ok ' : 'BAD'} ${b.direction.padEnd(8)} ${b.note}`);
  for (const p of live.ports) lines.push(`  ${p.found || p.hostPort <= 0 ? 'ok ' : 'BAD'} port ${p.index}  ${p.note}`);
  for (const e of live.errors) lines.push(`  !   ${e}`);
  return `${lines.join('\n')}\n${describeEffects(live)}`;
}

/** the text `inspectp` prints for one pod (one label per line, its value from column 17, or two spaces after a long label) */
export function formatStatus(s: SandboxStatus): string {
  const lines: string[] = [];
  // the longest label ("Bandwidth ingress", "Host port 31555") still leaves two spaces before its value
  const kv = (k: string, v: string) => lines.push(`${`${k}  `.padEnd(16)}${v}`);
  kv('ID', s.id);
  kv('Name', s.name);
  kv('State', `${s.state} (${s.internalState})`);
  if (s.state !== 'SANDBOX_READY' && s.notReadyReason && !s.cleanupPending?.length) kv('Not ready', s.notReadyReason);
  if (s.pauseExit) kv('Pause exit', describePauseExit(s.pauseExit));
  for (const p of s.cleanupPending ?? []) kv('Cleanup pending', describePendingEntry(p));
  if (s.state !== 'SANDBOX_READY') {
    const release = whatStopReleases(s);
    if (release.length) kv('Stop releases', release.join('; '));
  }
  kv('Created', s.createdAt);
  kv('Network', s.hostNetwork ? 'host' : `${s.netnsPath ?? '-'}${s.netnsClosed ? ' (closed)' : ''}`);
  kv('Pause', `${s.pause.status}${s.pause.pid ? `, pid ${s.pause.pid}` : ''}`);
  kv('IP', s.ip || '-');
  if (s.additionalIps.length) kv('Additional IPs', s.additionalIps.join(', '));
  if (s.ipSelection) kv('IP selection', `${s.ipSelection.reason}; eth0 had ${s.ipSelection.eth0Ips.join(', ')}`);
  for (const d of s.portMappings) {
    const m = d.mapping;
    kv(
      // numbered as in the config, from 1: "Port 0" would read as port number 0
      `Port mapping ${d.index + 1}`,
      `${m.host_ip ? `${m.host_ip}:` : ''}${m.host_port} -> ${m.container_port}/${['tcp', 'udp', 'sctp'][m.protocol] ?? m.protocol}${d.passed ? '' : `  DROPPED: ${d.reason}`}`,
    );
  }
  for (const c of s.hostPortConflicts ?? []) {
    kv(
      `Host port ${c.hostPort}`,
      `${c.protocol}${c.hostIP ? ` on ${c.hostIP}` : ''} contested: ${c.winner === s.id ? 'this sandbox' : c.winner} wins (${c.winnerFrom}); shadowed: ${c.shadowed.join(', ')}`,
    );
  }
  for (const dir of ['ingress', 'egress'] as const) {
    const b = s.bandwidthAnalysis[dir];
    if (b) kv(`Bandwidth ${dir}`, b.error ? `${b.raw}: ${b.error}` : `${b.raw} = ${b.bitsPerSecond} bit/s (${b.human})`);
  }
  for (const n of s.networks) {
    const ips = (n.result?.ips ?? []).map((i) => i.address).join(', ');
    kv(`CNI ${n.ifName}`, `${n.network} v${n.cniVersion}${ips ? `: ${ips}` : ''}`);
  }
  lines.push('Trace:');
  for (const t of s.trace) {
    const mark = t.ok ? ' ' : '!';
    const plugin = t.plugin ? ` exit=${t.plugin.exitCode}` : '';
    lines.push(
      `  ${mark} ${t.phase.padEnd(7)} ${t.durationMs.toFixed(1).padStart(8)} ms  ${t.label}${plugin}${t.error ? `  — ${t.error.message}` : ''}`,
    );
  }
  if (s.lastError) lines.push(`Last error: ${s.lastError.code}: ${s.lastError.message}`);
  return `${lines.join('\n')}\n`;
}
