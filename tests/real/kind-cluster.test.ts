/**
 * The test kit's kind-shaped cluster is what it says: three containerd nodes, each in its own network namespace with
 * its own hostname, one also in a private mount namespace (its socket only through /proc/<pid>/root), one also in its
 * own pid namespace; pods of one node reach pods of another over the kindnet-style routes; and stop() leaves nothing
 * behind (netns, veths, bridge).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import { startKindCluster, type KindCluster } from '../../testkit/kind-cluster';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const pod = (name: string): PodSandboxConfigInput => ({
  metadata: { name, namespace: 'kind', uid: `uid-${name}`, attempt: 0 },
  hostname: name,
});

let cluster: KindCluster | undefined;
let names: { bridge: string; netns: string[]; veths: string[] } | undefined;

beforeAll(async () => {
  cluster = await startKindCluster([{}, { privateMount: true }, { privateMount: true, ownPid: true }]);
  names = { bridge: cluster.bridge, netns: cluster.nodes.map((n) => n.netns), veths: cluster.nodes.map((n) => n.hostVeth) };
});

afterAll(async () => {
  await cluster?.stop();
});

describe('kind-shaped cluster', () => {
  it('runs each node in its own netns and UTS namespace; the private ones in their own mount (and pid) namespace', async () => {
    const own = (pid: number | 'self', ns: string) => readlinkSync(`/proc/${pid}/ns/${ns}`);
    for (const n of cluster!.nodes) {
      const pid = n.containerd.pid;
      expect(own(pid, 'net')).toBe(sh('ip', ['netns', 'exec', n.netns, 'readlink', '/proc/self/ns/net']).trim());
      expect(own(pid, 'net')).not.toBe(own('self', 'net'));
      expect(sh('nsenter', [`--uts=/proc/${pid}/ns/uts`, 'hostname']).trim()).toBe(n.hostname);
      expect(own(pid, 'mnt') !== own('self', 'mnt')).toBe(n.privateMount);
      expect(own(pid, 'pid') !== own('self', 'pid')).toBe(n.ownPid);
      expect((await n.containerd.api.connect()).runtimeName).toBe('containerd');
      // the private node's socket exists only inside its mount namespace
      expect(existsSync(n.containerd.innerSocketPath)).toBe(!n.privateMount);
    }
  });

  it('routes pod to pod across nodes', async () => {
    const [a, b, c] = cluster!.nodes;
    const podA = await a!.containerd.api.run({ config: pod('a') });
    const podB = await b!.containerd.api.run({ config: pod('b') });
    const podC = await c!.containerd.api.run({ config: pod('c') });
    const statusA = await a!.containerd.api.status(podA.id);
    const ipB = (await b!.containerd.api.status(podB.id)).ip;
    const ipC = (await c!.containerd.api.status(podC.id)).ip;
    expect(ipB.startsWith(b!.podSubnet4.split('.').slice(0, 3).join('.'))).toBe(true);
    // node a shares the host's mount namespace: its pod's netns file is on the host
    const ping = (ip: string) => sh('nsenter', [`--net=${statusA.netnsPath}`, 'ping', '-c', '1', '-W', '2', ip]);
    expect(ping(ipB)).toContain('1 received');
    expect(ping(ipC)).toContain('1 received');
  });

  it('stop() removes the netns, veths and bridge', async () => {
    await cluster!.stop();
    const netns = sh('ip', ['netns', 'list']);
    for (const ns of names!.netns) expect(netns).not.toContain(ns);
    const links = sh('ip', ['-o', 'link']);
    for (const v of [...names!.veths, names!.bridge]) expect(links).not.toContain(`${v}:`);
  });
});
