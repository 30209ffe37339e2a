/**
 * Another runtime's pod's ADD as libcni's cache keeps it, for the lab to diff a run against: the cache entry of the
 * pod's first non-loopback attachment holds the conflist that ran, its CNI_ARGS and capability args and the ADD's
 * final result. Each plugin's stdin is rebuilt from those as libcni built it (its own conf with the list's name and
 * cniVersion, runtimeConfig from the capabilities it declares); libcni keeps no prevResult, output, stderr or exit code
 * per plugin, so the lab compares only the stdins and the final result (lab/diff.ts). Read-only: the entry is read,
 * nothing is run.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import type { LabPluginTrace, LabRecordedAdd } from '../../../shared/domain/lab';
import { confListFromBytes } from '../cni/conf-list';
import { buildPluginStdin } from '../cni/plugin-stdin';
import type { PodLookup } from '../common/pod-facts';
import type { NodeFiles } from './deps';
import type { ForeignPodFacts } from './resolve';

export async function foreignRecordedAdd(files: NodeFiles, pods: PodLookup<ForeignPodFacts>, idOrPrefix: string): Promise<LabRecordedAdd> {
  const pod = pods.get(idOrPrefix);
  const att = pod.network?.networks.find((n) => n.network !== 'cni-loopback' && n.cacheFile);
  if (!att?.cacheFile)
    throw new PodscopeError(
      'FailedPrecondition',
      `sandbox ${pod.id} has no libcni cache entry of a network to compare with (host network, or stopped)`,
    );
  const text = await files.readText(att.cacheFile);
  if (text === undefined) throw new PodscopeError('FailedPrecondition', `libcni's cache entry ${att.cacheFile} cannot be read`);
  let doc: { config?: string; result?: unknown };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch (e) {
    throw new PodscopeError('FailedPrecondition', `libcni's cache entry ${att.cacheFile} is not JSON: ${(e as Error).message}`);
  }
  if (!doc.config) throw new PodscopeError('FailedPrecondition', `libcni's cache entry ${att.cacheFile} keeps no config`);
  const list = confListFromBytes(Buffer.from(doc.config, 'base64'));
  const last = list.plugins.length - 1;
  const plugins = list.plugins.map((plugin, index): LabPluginTrace => ({
    phase: 'ADD',
    verb: 'ADD',
    index,
    type: plugin.type,
    stdin: buildPluginStdin({ networkName: list.name, cniVersion: list.cniVersion, plugin, capabilityArgs: att.capabilityArgs }),
    // only the list's final result is kept: the last plugin's (its names and addresses become placeholders)
    stdout: index === last && doc.result !== undefined ? JSON.stringify(doc.result) : '',
    stderr: '',
    exitCode: 0,
    durationMs: 0,
    ok: true,
    startedAt: '',
  }));
  return {
    id: pod.id,
    name: pod.config.metadata.name,
    plugins,
    ...(pod.netnsPath !== undefined && { netns: pod.netnsPath }),
    ...((att.result ?? doc.result) !== undefined && { result: att.result ?? doc.result }),
    fromCache: att.cacheFile,
  };
}
