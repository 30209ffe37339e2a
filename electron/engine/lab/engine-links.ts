/** What the lab reads from the sandbox engine: live networks for the conflict check, a pod's recorded ADD for diffs. */
import { hasCode, PodscopeError } from '../../../shared/domain/errors';
import type { LabPluginTrace } from '../../../shared/domain/lab';
import type { SandboxApi } from '../../../shared/domain/sandbox';
import { conflistFacts } from './conflist-facts';
import type { RecordedAdd } from './diff';
import type { LiveNetworkUse } from './validate';

type Obj = Record<string, unknown>;

/** every network of every sandbox that still holds one (not yet stopped), with what its conflist uses */
export async function liveNetworkUses(api: Pick<SandboxApi, 'list' | 'status' | 'cniConfig'>): Promise<LiveNetworkUse[]> {
  const [summaries, config] = await Promise.all([api.list(), api.cniConfig()]);
  const out: LiveNetworkUse[] = [];
  for (const s of summaries) {
    const st = await api.status(s.id).catch((e: unknown) => {
      if (hasCode(e, 'NotFound')) return undefined;
      throw e;
    });
    if (!st || st.stoppedAt) continue;
    for (const att of st.networks) {
      if (att.network === 'cni-loopback') continue;
      const view = config.networks.find((n) => n.name === att.network);
      const facts = conflistFacts(
        att.network,
        (view?.plugins ?? []).map((p) => p.raw as Obj),
      );
      const ips = (att.result?.ips ?? []).map((ip) => ip.address.split('/')[0]!);
      out.push({
        sandboxId: s.id,
        sandboxName: s.name,
        network: att.network,
        bridges: facts.bridges,
        subnets: facts.subnets,
        ips,
        ipamDirs: facts.ipamDirs,
      });
    }
  }
  return out;
}

export async function recordedAddOf(api: Pick<SandboxApi, 'status'>, id: string): Promise<RecordedAdd> {
  const st = await api.status(id);
  const plugins: LabPluginTrace[] = st.trace
    .filter((t) => t.phase === 'run' && t.plugin && t.plugin.verb === 'ADD' && t.plugin.network !== 'cni-loopback')
    .map((t) => ({
      phase: 'ADD',
      verb: 'ADD',
      index: t.plugin!.index,
      type: t.plugin!.type,
      binary: t.plugin!.binary,
      stdin: t.plugin!.stdin,
      stdout: t.plugin!.stdout,
      stderr: t.plugin!.stderr,
      exitCode: t.plugin!.exitCode,
      durationMs: t.durationMs,
      ok: t.ok,
      startedAt: t.startedAt,
    }));
  if (plugins.length === 0)
    throw new PodscopeError(
      'FailedPrecondition',
      `sandbox ${id} has no recorded CNI ADD to compare with (host network, or its trace was not kept)`,
    );
  const eth = st.networks.find((n) => n.network !== 'cni-loopback');
  return { id: st.id, name: st.metadata.name, plugins, netns: st.netnsPath, result: eth?.result };
}
