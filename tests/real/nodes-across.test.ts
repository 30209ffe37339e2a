/**
 * Pods across the nodes of a kind-shaped cluster: `pods --all-nodes` lists every node's pods, each with its node;
 * `--endpoint` twice lists those two nodes only, with a NODE column; `inspectp --all-nodes` finds a pod on whichever
 * node has it, and for a node in its own pid namespace gives the pause's host pid — the process whose netns is the
 * pod's netns file (checked through the node's root, independently of the mapping).
 */
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxStatus, SandboxSummary } from '../../shared/domain/sandbox';
import { startKindCluster, type KindCluster } from '../../testkit/kind-cluster';
import { podscope } from './helpers/podscope-cli';

let cluster: KindCluster | undefined;
const podIds: string[] = [];

beforeAll(async () => {
  cluster = await startKindCluster([{}, { privateMount: true, ownPid: true }]);
  for (const n of cluster.nodes) {
    const name = `pod-${n.index}`;
    podIds.push(
      (await n.containerd.api.run({ config: { metadata: { name, namespace: 'across', uid: name, attempt: 0 }, hostname: name } })).id,
    );
  }
});

afterAll(async () => {
  await cluster?.stop();
});

describe('pods across nodes', () => {
  it('pods --all-nodes: every node’s pods, each carrying its node', async () => {
    const r = await podscope('pods', '--all-nodes', '-o', 'json');
    expect(r.code).toBe(0);
    const items = (JSON.parse(r.stdout) as { items: Array<SandboxSummary & { node: string }> }).items;
    for (const [i, n] of cluster!.nodes.entries()) expect(items.find((p) => p.id === podIds[i])?.node).toBe(n.hostname);
  });

  it('--endpoint twice: those nodes only, with a NODE column', async () => {
    const [a, b] = cluster!.nodes;
    const r = await podscope('pods', '--endpoint', a!.containerd.socketPath, '--endpoint', b!.containerd.socketPath, '--no-trunc');
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NODE\s+POD ID/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2))).toEqual(
      expect.arrayContaining([
        [a!.hostname, podIds[0]],
        [b!.hostname, podIds[1]],
      ]),
    );
    expect(lines).toHaveLength(3);
  });

  it('inspectp --all-nodes: the pod on its node, the pause pid of a pid-namespaced node mapped to the host’s', async () => {
    const b = cluster!.nodes[1]!;
    const r = await podscope('inspectp', '--all-nodes', '-o', 'json', podIds[1]!);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as SandboxStatus & { node: { name: string }; pauseHostPid?: number };
    expect(doc.node.name).toBe(b.hostname);
    expect(doc.pauseHostPid).toBeDefined();
    expect(doc.pauseHostPid).not.toBe(doc.pause.pid);
    // the mapped process's netns is the pod's: its netns file exists only in the node's mount namespace
    // (/var/run is an absolute symlink to /run: through /proc/<pid>/root it would resolve against the host's root)
    const podNetns = statSync(`/proc/${b.containerd.pid}/root${doc.netnsPath!.replace(/^\/var\/run\//, '/run/')}`);
    expect(statSync(`/proc/${doc.pauseHostPid}/ns/net`).ino).toBe(podNetns.ino);
    // and the node numbers it as the runtime said
    expect(readFileSync(`/proc/${doc.pauseHostPid}/status`, 'utf8')).toMatch(
      new RegExp(`^NSpid:\\s+${doc.pauseHostPid}\\s+${doc.pause.pid}\\b`, 'm'),
    );
    const text = await podscope('inspectp', '--all-nodes', podIds[0]!);
    expect(text.stdout).toMatch(new RegExp(`^Node\\s+${cluster!.nodes[0]!.hostname} `, 'm'));
  });
});
