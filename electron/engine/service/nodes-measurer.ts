/**
 * The measuring verbs across the nodes of this machine (`--all-nodes`, or several `--endpoint`): each node's pods are
 * measured by that node's foreign-pod measurer (host-side work in the node's namespaces), and the paths between nodes
 * by probe/across.ts, over one probe net placed on no node (every agent opened by its netns path). Read-only as every
 * foreign measurement: the probe's responders and agents, the trace's rules and monitors are its own and removed
 * before a verb returns.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import type { ProbeMatrix } from '../../../shared/domain/nodes';
import type { ProbeReport } from '../../../shared/domain/probe';
import type { PodTopology } from '../../../shared/domain/topology';
import type { ForeignNode } from '../foreign/deps';
import type { ProbeNet } from '../netns/probe-net';
import { probeAcrossNodes, probeMatrix, type AcrossNode } from '../probe/across';
import type { FlowTracer } from '../trace/flow-tracer';
import type { ForeignMeasurements } from './foreign-measurer';
import { probeTracer } from './probe-tracer';
import { closeController } from '../common/close-signal';

export interface NodeMember {
  node: ForeignNode;
  measurer: ForeignMeasurements;
}

export interface NodesMeasurerDeps {
  /** placed on no node: agents are opened in whichever netns a path names */
  probeNet: ProbeNet;
  flowTracer?: FlowTracer;
}

export interface NodesMeasurements {
  /** the pod's own paths on its node, and every path between it and the other nodes, each naming both nodes */
  probe(id: string, opts?: { trace?: boolean; mtu?: boolean }): Promise<ProbeReport>;
  /** every pod × every pod of the nodes */
  matrix(opts?: { trace?: boolean }): Promise<ProbeMatrix>;
  /** the pod's wiring, read on its node (in the node's namespaces), naming the node */
  topology(id: string): Promise<PodTopology>;
  close(): void;
}

export function createNodesMeasurer(deps: NodesMeasurerDeps, members: NodeMember[]): NodesMeasurements {
  const abort = closeController();
  const across = { net: deps.probeNet, ...(deps.flowTracer && { tracer: probeTracer(deps.flowTracer) }) };

  /** every node's pods now; a node that cannot be read is named, the others still measured */
  const snapshot = async (): Promise<{ nodes: Array<AcrossNode & { member: NodeMember }>; errors: string[] }> => {
    const errors: string[] = [];
    const read = await Promise.all(
      members.map(async (m) => {
        try {
          const pods = await m.measurer.pods();
          return { ...acrossNode(m.node, pods.all()), member: m, lookup: pods };
        } catch (e) {
          errors.push(`node ${m.node.name}: ${(e as Error).message}`);
          return undefined;
        }
      }),
    );
    return { nodes: read.filter((n) => n !== undefined), errors };
  };

  /** the one node a pod id (or unique prefix) names; every node's pods are read now */
  const homeOf = async (id: string) => {
    const { nodes, errors } = await snapshot();
    const hits = nodes.filter((n) => n.pods.some((p) => p.id === id || p.id.startsWith(id)));
    if (hits.length > 1)
      throw new PodscopeError('InvalidArgument', `${id} names a pod on several nodes: ${hits.map((h) => h.name).join(', ')}`);
    const home = hits[0];
    if (!home)
      throw new PodscopeError(
        'NotFound',
        `no pod ${id} on ${nodes.map((n) => n.name).join(', ')}${errors.length ? ` (${errors.join('; ')})` : ''}`,
      );
    return { home, nodes, errors };
  };

  return {
    async probe(id, opts = {}) {
      const { home, nodes, errors } = await homeOf(id);
      const report = await home.member.measurer.probe(id, opts);
      // the paths within its node start and end there
      for (const p of report.paths) {
        p.fromNode ??= home.name;
        p.toNode ??= home.name;
      }
      const cross = await probeAcrossNodes(across, nodes, report.sandboxId, {
        trace: opts.trace === true,
        mtu: opts.mtu !== false,
        signal: abort.signal,
      });
      report.paths.push(...cross.paths);
      report.errors.push(...errors, ...cross.errors);
      report.node = home.name;
      report.nodes = nodes.map((n) => n.name);
      return report;
    },

    async topology(id) {
      const { home } = await homeOf(id);
      return { ...(await home.member.measurer.topology(id)), node: home.name };
    },

    async matrix(opts = {}) {
      const { nodes, errors } = await snapshot();
      const m = await probeMatrix(across, nodes, { trace: opts.trace === true, signal: abort.signal });
      m.errors.unshift(...errors);
      return m;
    },

    close() {
      abort.abort();
      for (const m of members) m.measurer.close();
    },
  };
}

function acrossNode(node: ForeignNode, pods: AcrossNode['pods']): AcrossNode {
  return {
    name: node.name,
    ...(node.netnsPath !== undefined && { netnsPath: node.netnsPath }),
    addresses: node.addresses,
    podSubnets: node.podSubnets,
    pods,
  };
}
