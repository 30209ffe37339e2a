/**
 * The nodes a verb works across: `--all-nodes` (every node discovery finds) or `--endpoint` given more than once.
 * Each node is a CRI runtime reached on its own connection; a node that fails is reported and the others still
 * answer, so one stuck kind node does not hide the rest.
 */
import { PodscopeError } from '../../shared/domain/errors';
import type { CriEndpointApi } from '../cri/client/endpoint-api-types';
import type { Flags } from './args';

export interface ChosenNode {
  name: string;
  endpoint: string;
  /** the runtime's host pid, when discovery saw its process (for mapping the pids it reports) */
  pid?: number;
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
    return nodes.map((n) => ({ name: n.name, endpoint: n.endpoint, ...(n.pid !== undefined && { pid: n.pid }) }));
  }
  // a listed endpoint takes its node's name when discovery knows it
  return listed!.map((e) => {
    const n = nodes.find((x) => x.endpoint === bare(e));
    return { name: n?.name ?? e, endpoint: e, ...(n?.pid !== undefined && { pid: n.pid }) };
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
