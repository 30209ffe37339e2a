/**
 * The nodes a verb works across: `--all-nodes` (every node discovery finds) or `--endpoint` given more than once.
 * Each node is a CRI runtime reached on its own connection; a node that fails is reported and the others still
 * answer, so one stuck kind node does not hide the rest.
 */
import { PodscopeError } from '../../shared/domain/errors';
import type { NodeView } from '../../shared/domain/nodes';
import type { CriEndpointApi } from '../cri/client/endpoint-api-types';
import type { NodesMeasurements } from '../engine/api';
import type { Flags } from './args';

export interface ChosenNode {
  name: string;
  endpoint: string;
  /** the runtime's host pid, when discovery saw its process (for mapping the pids it reports) */
  pid?: number;
  /** what discovery read of it (absent: an endpoint discovery does not know) */
  view?: NodeView;
}

export interface NodeAnswer<T> {
  node: ChosenNode;
  value?: T;
  error?: string;
}

export const NODE_FLAGS = { 'all-nodes': { type: 'boolean' } } as const;
export const NODE_FLAGS_HELP = `  --all-nodes  every node on this machine (see podscope nodes); --endpoint may also be given more than once`;

const bare = (e: string) => e.replace(/^unix:\/\//, '');

/** the chosen nodes, or undefined when the verb runs on one endpoint (or the local engine) as before */
export async function chosenNodes(flags: Flags): Promise<ChosenNode[] | undefined> {
  const listed = flags.endpoints as string[] | undefined;
  if (!flags['all-nodes'] && !listed) return undefined;
  if (flags['all-nodes'] && (listed || typeof flags.endpoint === 'string'))
    throw new PodscopeError('InvalidArgument', 'give --all-nodes or --endpoint, not both');
  const { discoverHostNodes } = await import('../endpoints/nodes');
  const { nodes } = await discoverHostNodes();
  if (flags['all-nodes']) {
    if (nodes.length === 0) throw new PodscopeError('NotFound', 'no CRI runtime found on this machine (see podscope nodes)');
    return nodes.map((n) => ({ name: n.name, endpoint: n.endpoint, ...(n.pid !== undefined && { pid: n.pid }), view: n }));
  }
  // a listed endpoint takes its node's name when discovery knows it
  return listed!.map((e) => {
    const n = nodes.find((x) => x.endpoint === bare(e));
    return { name: n?.name ?? e, endpoint: e, ...(n?.pid !== undefined && { pid: n.pid }), ...(n && { view: n }) };
  });
}

/** runs fn on every node at once, each on its own connection */
export async function acrossNodes<T>(
  nodes: ChosenNode[],
  fn: (api: CriEndpointApi, node: ChosenNode) => Promise<T>,
): Promise<Array<NodeAnswer<T>>> {
  const { createCriEndpointApi } = await import('../cri/client');
  return Promise.all(
    nodes.map(async (node) => {
      const api = createCriEndpointApi(node.endpoint, { connectTimeoutMs: 3000 });
      try {
        return { node, value: await fn(api, node) };
      } catch (e) {
        return { node, error: (e as Error).message };
      } finally {
        api.close();
      }
    }),
  );
}

/** a failed node's line on stderr */
export function reportFailures(answers: Array<NodeAnswer<unknown>>): void {
  for (const a of answers) if (a.error !== undefined) process.stderr.write(`node ${a.node.name} (${a.node.endpoint}): ${a.error}\n`);
}

/**
 * The measurer across the chosen nodes: each node's runtime on its own connection, each placed in its namespaces.
 * A node whose runtime does not answer is reported on stderr and left out; none answering is an error.
 */
export async function withNodesMeasurer<T>(
  nodes: ChosenNode[],
  flags: Flags,
  fn: (m: NodesMeasurements, chosen: ChosenNode[]) => Promise<T>,
): Promise<T> {
  const [{ createCriEndpointApi }, { createNodesMeasurer, inProcessRunner }, { openNode }] = await Promise.all([
    import('../cri/client'),
    import('../engine/api'),
    import('../endpoints/nodes'),
  ]);
  const cacheDir = flags['endpoint-cni-cache'];
  const opened = await Promise.all(
    nodes.map(async (n) => {
      const cri = createCriEndpointApi(n.endpoint, { connectTimeoutMs: 3000 });
      try {
        // discovery already ran to choose the nodes: a node it does not know is measured unplaced, under its endpoint's name
        const { source, node } = await openNode(cri, n.view ? { view: n.view } : {});
        return { n, cri, source, node: node ?? { name: n.name, addresses: [], podSubnets: [] } };
      } catch (e) {
        process.stderr.write(`node ${n.name} (${n.endpoint}): ${(e as Error).message}\n`);
        cri.close();
        return undefined;
      }
    }),
  );
  const up = opened.filter((o) => o !== undefined);
  if (up.length === 0) throw new PodscopeError('Unavailable', `no chosen node answered: ${nodes.map((n) => n.name).join(', ')}`);
  const m = await createNodesMeasurer(
    up.map(({ source, node }) => ({ node, source, ...(typeof cacheDir === 'string' && { cniCacheDir: cacheDir }) })),
    { runner: await inProcessRunner() },
  );
  try {
    return await fn(
      m,
      up.map((o) => o.n),
    );
  } finally {
    m.close();
    for (const o of up) o.cri.close();
  }
}
