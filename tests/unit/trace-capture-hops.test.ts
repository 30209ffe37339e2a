/**
 * The trace's capture finds the hops of a pod's flow through the engine's one kernel reader (no `ip` of its own):
 * eth0 in the pod, the host veth whose ifindex eth0 names as its peer, and the bridge that veth is a port of. Run over
 * the fake kernel the fake CNI plugins leave, through the real LinuxKernelReader and its commands.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LinuxKernelReader } from '../../electron/engine/kernel/linux-reader';
import { podHops } from '../../electron/engine/trace/capture';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';

let te: TestEngine | undefined;
afterEach(async () => {
  await te?.close();
  te = undefined;
});

const meta = (name: string) => ({ metadata: { name, namespace: 'ns', uid: name, attempt: 0 } });

describe('trace capture hops', () => {
  it("names a pod's host veth by eth0's peer and its bridge, each pod its own", async () => {
    te = await createTestEngine();
    const kernel = new LinuxKernelReader(te.kernelCommands);
    await te.engine.run({ config: meta('a') });
    await te.engine.run({ config: meta('b') });
    const pods = [...te.kernel.netns.keys()];
    expect(pods).toHaveLength(2);
    const seen = new Set<string>();
    for (const path of pods) {
      const eth0 = te.kernel.podLinks(path).find((l) => l.name === 'eth0')!;
      const hops = await podHops(kernel, { key: path, path, label: 'the pod' });
      expect(hops.eth0).toMatchObject({ netns: path, netnsPath: path, interface: 'eth0' });
      expect(hops.veth).toMatchObject({ netns: 'host', interface: eth0.peer });
      expect(hops.bridge).toMatchObject({ netns: 'host', interface: te.kernel.host.get(eth0.peer!)!.master });
      seen.add(hops.veth!.interface);
    }
    expect(seen.size).toBe(2);
  });

  it('a pod whose eth0 has no peer (no veth) is captured on eth0 alone', async () => {
    te = await createTestEngine();
    const kernel = new LinuxKernelReader(te.kernelCommands);
    const hops = await podHops(kernel, { key: 'x', path: '/run/netns/none', label: 'a netns with nothing' });
    expect(hops).toEqual({ eth0: { netns: 'x', netnsPath: '/run/netns/none', interface: 'eth0', label: 'eth0 in a netns with nothing' } });
  });
});
