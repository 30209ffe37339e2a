/**
 * Opening a node: the one step every measurer of a CRI runtime's pods starts from — the CLI's `--endpoint`, its
 * `--all-nodes`, and the app's added endpoints (and its matrix). It connects to the runtime, finds it among the nodes
 * discovery sees on this machine, and says where its pods live as this process reaches them: its netns, its root and
 * its pid numbering when they are not the host's (a kind node). A runtime discovery does not know is measured in the
 * host's namespaces, as before discovery existed.
 */
import { stat } from 'node:fs/promises';
import type { NodeDiscovery, NodeView } from '../../../shared/domain/nodes';
import type { CriEndpointApi } from '../../cri/client/endpoint-api-types';
import type { ForeignNode, ForeignSource } from '../../engine/api';
import { foreignSourceOf } from '../foreign-measurements';
import { hostPidOf } from './pids';
import { hostProcSource, type ProcSource } from './proc-source';

export interface OpenedNode {
  /** the runtime's pods as a measurer reads them (verbose statuses and its CNI view, over its CRI client) */
  source: ForeignSource;
  /** where its pods live (undefined: discovery does not know this runtime; measured from the host's namespaces) */
  node?: ForeignNode;
  /** what discovery read of it */
  view?: NodeView;
}

export interface OpenNodeOptions {
  /** what discovery read of it, when the caller has it already (`--all-nodes`): discovery is not asked again */
  view?: NodeView;
  /** discovery on this machine, asked only without a view (default: none, the runtime is measured unplaced) */
  discover?: () => Promise<NodeDiscovery>;
  /** /proc as this process reads it (for mapping the pids a runtime in its own pid namespace reports) */
  proc?: ProcSource;
}

export async function openNode(cri: CriEndpointApi, opts: OpenNodeOptions = {}): Promise<OpenedNode> {
  const version = await cri.connect();
  // a discovery that fails leaves the runtime unplaced rather than unmeasurable: its pods in the host's namespaces
  // are still measured right, and a kind node's pods then fail naming the netns path they could not open
  const view =
    opts.view ??
    (opts.discover
      ? await opts.discover().then(
          (d) => nodeOfSocket(d.nodes, cri.socketPath),
          () => undefined,
        )
      : undefined);
  const source = foreignSourceOf(cri, `${version.runtimeName} at ${cri.address}`);
  if (!view) return { source };
  return { source, node: placeOf(view, opts.proc ?? hostProcSource()), view };
}

/**
 * The discovered node whose socket this is: the same path, else the same socket file reached another way (a kind
 * node's socket added as /proc/<pid>/root/var/run/… while discovery says /proc/<pid>/root/run/…, or the host's
 * /var/run/containerd/containerd.sock). Same device and inode is the same socket whatever the path.
 */
export async function nodeOfSocket(nodes: NodeView[], socketPath: string): Promise<NodeView | undefined> {
  const bare = socketPath.replace(/^unix:\/\//, '');
  const named = nodes.find((n) => n.endpoint.replace(/^unix:\/\//, '') === bare);
  if (named) return named;
  const id = await fileId(bare);
  if (!id) return undefined;
  for (const n of nodes) if ((await fileId(n.endpoint.replace(/^unix:\/\//, ''))) === id) return n;
  return undefined;
}

const fileId = (path: string) =>
  stat(path).then(
    (s) => `${s.dev}:${s.ino}`,
    () => undefined,
  );

/**
 * Where the engine finds a node's pods and does their host-side work: its netns, root and pid numbering as this
 * process reaches them through the runtime's pid. Always given for a discovered node (the paths across nodes name it);
 * the netns, root and pid mapping only where they are not the host's.
 */
export function placeOf(view: NodeView, proc: ProcSource): ForeignNode {
  const pid = view.pid;
  const own = (ns: keyof NodeView['namespaces']) => pid !== undefined && !view.namespaces[ns].host;
  const node: ForeignNode = {
    name: view.name,
    addresses: view.addresses.map((a) => a.cidr.split('/')[0]!),
    podSubnets: view.podSubnets.map((s) => s.cidr),
  };
  if (own('net')) node.netnsPath = `/proc/${pid}/ns/net`;
  if (own('mnt')) node.root = `/proc/${pid}/root`;
  if (own('pid')) node.hostPid = (reported) => hostPidOf(proc, pid!, reported);
  return node;
}
