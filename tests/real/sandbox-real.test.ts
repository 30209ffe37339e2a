/**
 * The engine with real parts: a netns, Debian's bridge/host-local/portmap/bandwidth plugins and runc.
 * Needs root. Every resource is removed in afterAll, even when a test fails.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { hasCode } from '../../shared/domain/errors';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import type { SandboxSummary } from '../../shared/domain/sandbox';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { until } from '../../testkit/until';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { STATE_DIR_ID_FILE, isOwnedNetnsPath, netnsTag } from '../../electron/engine/pods/ownership';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8' });
// from the env's lease (set in beforeAll): no other test file maps it
let hostPort: number;

function pod(name: string, extra: Partial<PodSandboxConfigInput> = {}): PodSandboxConfigInput {
  return { metadata: { name, namespace: 'podscope-test', uid: `uid-${name}` }, hostname: name, ...extra };
}

function tcpRequest(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port }, () => s.write('ping\n'));
    let data = '';
    s.setTimeout(5000, () => {
      s.destroy();
      reject(new Error(`timeout talking to ${host}:${port}`));
    });
    s.on('data', (b) => (data += b.toString()));
    s.on('end', () => resolve(data));
    s.on('error', reject);
  });
}

let env: RealEnv;
let engine: SandboxEngine;

/** the namespaces in the host's netns dir that this env's engine made (named with the owner tag of its state dir) */
function ownNetns(): string[] {
  const tag = netnsTag(readFileSync(join(env.options.stateDir!, STATE_DIR_ID_FILE), 'utf8').trim());
  return readdirSync('/var/run/netns').filter((n) => isOwnedNetnsPath(n, tag));
}

beforeAll(async () => {
  env = await createRealEnv({ tag: 't0' });
  hostPort = env.port(0);
  engine = await env.engine();
});

afterAll(async () => {
  await env?.teardown();
});

describe('a sandbox on bridge + host-local (v4+v6) + portmap + bandwidth with runc', () => {
  let id: string;
  let listener: ChildProcess | undefined;

  afterAll(() => {
    if (listener?.exitCode === null && listener.pid) process.kill(listener.pid, 'SIGKILL');
  });

  it('runs: eth0 has both addresses inside the netns and the primary IP is the IPv4 one (default preference)', async () => {
    ({ id } = await engine.run({
      config: pod('web', {
        port_mappings: [
          { container_port: 8080, host_port: hostPort },
          { container_port: 81, host_port: 0 },
        ],
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '2M' },
      }),
    }));
    const st = await engine.status(id);
    expect(st.state).toBe('SANDBOX_READY');
    expect(st.ip.startsWith(subnetTextPrefix(env.subnet4))).toBe(true);
    expect(st.additionalIps).toHaveLength(1);
    expect(st.additionalIps[0]!.startsWith(subnetTextPrefix(env.subnet6!))).toBe(true);
    const inside = sh('ip', ['-n', basename(st.netnsPath!), '-o', 'addr', 'show', 'dev', 'eth0']);
    expect(inside).toContain(`inet ${st.ip}/24`);
    expect(inside).toContain(`inet6 ${st.additionalIps[0]}/64`);
    // the pause process lives in that netns
    expect(sh('readlink', [`/proc/${st.pause.pid}/ns/net`]).trim()).toBe(
      sh('ip', ['netns', 'exec', basename(st.netnsPath!), 'readlink', '/proc/self/ns/net']).trim(),
    );
    // one trace entry per plugin exec, with the runtimeConfig each one got
    const adds = st.trace.filter((t) => t.step === 'cni.plugin' && t.plugin?.verb === 'ADD').map((t) => t.plugin!.type);
    expect(adds.sort()).toEqual(['bandwidth', 'bridge', 'loopback', 'portmap']);
    const portmapStdin = JSON.parse(st.trace.find((t) => t.plugin?.type === 'portmap')!.plugin!.stdin);
    expect(portmapStdin.runtimeConfig).toEqual({ portMappings: [{ hostPort, containerPort: 8080, protocol: 'tcp' }] });
  });

  it('reaches a TCP listener inside the netns through the mapped host port', async () => {
    const st = await engine.status(id);
    // the probe-on-ready run holds a listener of its own on the pod's ports while it measures: wait until it is done
    await until(async () => (await engine.lastProbe(id)) !== null, { what: 'the probe run after ready', timeout: 60_000 });
    const server = "require('net').createServer((s) => s.end('pong-from-pod\\n')).listen(8080, () => console.log('listening'))";
    listener = spawn('ip', ['netns', 'exec', basename(st.netnsPath!), process.execPath, '-e', server], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((resolve) => listener!.stdout!.once('data', resolve));
    const hostIp = sh('ip', ['-4', '-o', 'addr', 'show', 'dev', env.bridge]).match(/inet (\S+)\//)![1]!;
    // through the host port on the host's address (DNAT in PREROUTING/OUTPUT for local destinations)
    expect(await tcpRequest(hostIp, hostPort)).toContain('pong-from-pod');
    // and on 127.0.0.1: portmap's SNAT mark + route_localnet make loopback work too
    expect(await tcpRequest('127.0.0.1', hostPort)).toContain('pong-from-pod');
  });

  it('applies bandwidth: a tbf qdisc at 10Mbit on the host veth and 2Mbit on the ifb device', async () => {
    const st = await engine.status(id);
    const bridgeResult = st.networks.find((n) => n.ifName === 'eth0')!.result!;
    const hostVeth = bridgeResult.interfaces!.find((i) => i.name.startsWith('veth'))!.name;
    expect(sh('tc', ['qdisc', 'show', 'dev', hostVeth])).toMatch(/tbf .*rate 10Mbit/);
    const ifb = bridgeResult.interfaces!.find((i) => i.name.startsWith('bwp'))!.name;
    expect(sh('tc', ['qdisc', 'show', 'dev', ifb])).toMatch(/tbf .*rate 2Mbit/);
  });

  it("live view: the kernel has eth0's addresses, tbf at the annotated rates and this pod's DNAT", async () => {
    const st = await engine.status(id);
    const live = await engine.live(id.slice(0, 10));
    expect(live.errors).toEqual([]);
    const eth0 = live.interfaces.find((i) => i.name === 'eth0')!;
    expect(eth0.addresses.filter((a) => a.scope === 'global').map((a) => a.address)).toEqual([st.ip, ...st.additionalIps]);
    expect(live.bandwidth.map((b) => [b.direction, b.appliedBitsPerSecond, b.matches])).toEqual([
      ['ingress', 10_000_000, true],
      ['egress', 2_000_000, true],
    ]);
    expect(live.ports.map((p) => p.found)).toEqual([true, false]); // the host_port 0 mapping never reaches CNI
    expect(live.ports[0]!.note).toBe(`DNAT *:${hostPort}/tcp → ${st.ip}:8080`);
    expect(live.routes.some((r) => r.dev === 'eth0')).toBe(true);
  });

  it("live view: a dual-stack pod's host port has its DNAT rule in both families, iptables and ip6tables", async () => {
    const st = await engine.status(id);
    const [mapped] = (await engine.live(id)).ports;
    expect(mapped!.rules).toHaveLength(2);
    expect(mapped!.rules[0]).toMatch(new RegExp(`--dport ${hostPort} -j DNAT --to-destination ${st.ip.replace(/\./g, '\\.')}:8080$`));
    expect(mapped!.rules[1]).toMatch(new RegExp(`--dport ${hostPort} -j DNAT --to-destination \\[${st.additionalIps[0]}\\]:8080$`));
  });

  let dnChain: string | undefined;
  it('programs the pod CNI-DN chain for the mapped port', () => {
    const rules = sh('iptables', ['-t', 'nat', '-S']).split('\n');
    // the pod's own chain: the one whose DNAT rule names our host port (other runtimes may have chains too)
    dnChain = rules.find((l) => l.startsWith('-A CNI-DN-') && l.includes(`--dport ${hostPort} `) && l.includes('DNAT'))?.split(' ')[1];
    expect(dnChain).toMatch(/^CNI-DN-[0-9a-f]+$/);
    expect(rules).toContain(`-N ${dnChain}`);
  });

  it('stops (idempotently) and removes, leaving no netns, veth, IP reservation, chain, cache file, runc container or state', async () => {
    const st = await engine.status(id);
    const netns = st.netnsPath!;
    const hostVeth = st.networks.find((n) => n.ifName === 'eth0')!.result!.interfaces!.find((i) => i.name.startsWith('veth'))!.name;
    await engine.stop(id);
    const stopped = await engine.status(id);
    expect(stopped.state).toBe('SANDBOX_NOTREADY');
    expect(stopped.ip).toBe('');
    expect(stopped.additionalIps).toEqual([]);
    const delsDuring: string[] = [];
    const unsubscribe = engine.subscribe((e) => {
      if (e.type === 'sandbox.progress' && e.entry.plugin?.verb === 'DEL') delsDuring.push(`${e.entry.phase} ${e.entry.plugin.type}`);
    });
    await expect(engine.live(id)).rejects.toSatisfy(
      (e) => hasCode(e, 'FailedPrecondition') && /is stopped: its network namespace/.test((e as Error).message),
    );
    await engine.stop(id); // a second stop repeats DEL (as containerd) and succeeds
    expect(delsDuring.filter((d) => d.startsWith('stop'))).toHaveLength(4);
    await engine.remove(id);
    unsubscribe();
    // remove after a completed stop has nothing left to release: no third DEL (containerd repeats it, ~170 ms of portmap)
    expect(delsDuring.filter((d) => d.startsWith('remove'))).toEqual([]);
    await expect(engine.status(id)).rejects.toSatisfy((e) => hasCode(e, 'NotFound'));
    await engine.stop(id); // unknown id: success
    await engine.remove(id);
    expect(existsSync(netns)).toBe(false);
    expect(sh('ip', ['link', 'show']).includes(hostVeth)).toBe(false);
    expect(
      readdirSync(join(env.ipamDir, env.network)).filter(
        (f) => (/^[0-9a-f.:]+$/.test(f) && f.includes(':')) || /^\d+\.\d+\.\d+\.\d+$/.test(f),
      ),
    ).toEqual([]);
    const rulesAfter = sh('iptables', ['-t', 'nat', '-S']);
    expect(rulesAfter).not.toContain(`-N ${dnChain}`);
    expect(rulesAfter).not.toContain(`--dport ${hostPort} `);
    expect(readdirSync(join(env.options.cniCacheDir!, 'results')).filter((f) => f.includes(id))).toEqual([]);
    expect(sh('runc', ['--root', join(env.options.runDir!, 'runc'), 'list', '-q']).trim()).toBe('');
    expect(existsSync(join(env.options.stateDir!, 'store', `${id}.json`))).toBe(false);
    expect(existsSync(join(env.options.stateDir!, 'sandboxes', id))).toBe(false);
    expect(existsSync(join(env.options.runDir!, 'sandboxes', id))).toBe(false);
  });
});

describe('IP preference', () => {
  it('ipv6 (per sandbox) makes the IPv6 address primary and keeps the IPv4 one as additional', async () => {
    const { id } = await engine.run({ config: pod('v6'), ipPreference: 'ipv6' });
    const st = await engine.status(id);
    expect(st.ip.startsWith(subnetTextPrefix(env.subnet6!))).toBe(true);
    expect(st.additionalIps[0]!.startsWith(subnetTextPrefix(env.subnet4))).toBe(true);
    expect(st.ipSelection?.eth0Ips.map((ip) => ip.includes(':'))).toEqual([false, true]); // CNI order: v4 range first
    expect(st.ipSelection?.alternatives.cni.primary).toBe(st.ipSelection?.eth0Ips[0]);
    await engine.remove(id);
  });
});

describe('concurrency', () => {
  it('10 concurrent runs get 10 distinct IPs', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => engine.run({ config: pod(`many-${i}`) })));
    const ips = await Promise.all(results.map(async ({ id }) => (await engine.status(id)).ip));
    expect(new Set(ips).size).toBe(10);
    await Promise.all(results.map(({ id }) => engine.remove(id)));
  });

  it('two concurrent runs with the same name: exactly one succeeds, the other is AlreadyExists naming the holder', async () => {
    const settled = await Promise.allSettled([engine.run({ config: pod('twin') }), engine.run({ config: pod('twin') })]);
    const ok = settled.filter((s) => s.status === 'fulfilled') as PromiseFulfilledResult<{ id: string }>[];
    const failed = settled.filter((s) => s.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(1);
    expect(failed).toHaveLength(1);
    expect(hasCode(failed[0]!.reason, 'AlreadyExists')).toBe(true);
    expect((failed[0]!.reason as Error).message).toContain(ok[0]!.value.id);
    await engine.remove(ok[0]!.value.id);
  });
});

describe('bad input and failures', () => {
  it('an invalid bandwidth annotation is refused before anything is created', async () => {
    // this engine's namespaces (their names carry its owner tag): other test files create theirs meanwhile
    const netnsBefore = ownNetns().length;
    await expect(engine.run({ config: pod('badbw', { annotations: { 'kubernetes.io/ingress-bandwidth': '10X' } }) })).rejects.toSatisfy(
      (e) => hasCode(e, 'InvalidArgument') && /kubernetes.io\/ingress-bandwidth "10X": quantities must match/.test((e as Error).message),
    );
    expect(ownNetns().length).toBe(netnsBefore);
    expect(await engine.list()).toEqual([]);
    // the name was never kept
    const { id } = await engine.run({ config: pod('badbw') });
    await engine.remove(id);
  });

  it('a pause process that dies makes the sandbox NOTREADY while its network stays until stop', async () => {
    const { id } = await engine.run({ config: pod('dies') });
    const st = await engine.status(id);
    process.kill(st.pause.pid!, 'SIGKILL');
    // until the kernel has the process gone (a fixed 200 ms sleep was the same wait, unbounded by a condition)
    const after = await until(
      async () => {
        const s = await engine.status(id);
        return s.state === 'SANDBOX_NOTREADY' && s;
      },
      { what: 'status to say NOTREADY after the pause was killed' },
    );
    expect(after.ip).toBe(st.ip);
    await engine.remove(id);
  });
});

describe('live view (no one has to ask)', () => {
  it('a pause process killed from outside is reported as NOTREADY by an event', async () => {
    const { id } = await engine.run({ config: pod('watched') });
    const st = await engine.status(id);
    const changes: SandboxSummary[] = [];
    const notReady = new Promise<SandboxSummary>((resolve) => {
      const off = engine.subscribe((e) => {
        if (e.type !== 'sandbox.changed' || e.id !== id) return;
        changes.push(e.summary);
        if (e.summary.state === 'SANDBOX_NOTREADY') {
          off();
          resolve(e.summary);
        }
      });
    });
    process.kill(st.pause.pid!, 'SIGKILL');
    // Nobody calls status or list here: only the engine's own liveness poll can notice. The bound is many poll
    // periods, so missing it means "no event", not "slow".
    const seen = await Promise.race([notReady, new Promise<undefined>((r) => setTimeout(() => r(undefined), 30_000))]);
    expect(seen, 'no sandbox.changed NOTREADY event after the pause process was killed').toBeDefined();
    expect(seen).toMatchObject({ id, state: 'SANDBOX_NOTREADY', internalState: 'NotReady', ip: st.ip });
    // exactly one change, and it is that one: the kill was not reported twice nor preceded by something else
    expect(changes).toHaveLength(1);
    await engine.remove(id);
  });

  it('a conflist written into the conf dir is reloaded and announced, as containerd watches its conf dir', async () => {
    const announced = new Promise<string[]>((resolve) => {
      const off = engine.subscribe((e) => {
        if (e.type === 'cni.config' && e.config.errors.length > 0) {
          off();
          resolve(e.config.errors.map((x) => x.source));
        }
      });
    });
    const bad = join(env.options.cniConfDir!, '05-broken.conflist');
    writeFileSync(bad, '{"cniVersion": "1.0.0", "name": "broken"'); // sorts first, so it is inside the maxConfNum window
    let healed = false;
    try {
      expect(await announced).toEqual([bad]);
      expect((await engine.cniConfig()).ready).toBe(false);
      // the removal is announced too, by an event without errors (a fixed sleep here was too short under load)
      const off = engine.subscribe((e) => {
        if (e.type === 'cni.config' && e.config.errors.length === 0) {
          off();
          healed = true;
        }
      });
    } finally {
      rmSync(bad);
    }
    await until(() => healed, { what: 'a cni.config event without errors after the broken file was removed', timeout: 30_000 });
    expect((await engine.cniConfig()).ready).toBe(true);
  });
});

describe('state', () => {
  it('a second engine on the same state dir is refused with the owner named', async () => {
    await expect(env.engine()).rejects.toSatisfy(
      (e) => hasCode(e, 'FailedPrecondition') && /in use by another Podscope engine \(pid \d+/.test((e as Error).message),
    );
  });

  it('a new engine sees every sandbox an earlier one made, reconciled with runc', async () => {
    const { id } = await engine.run({ config: pod('persist') });
    await engine.close();
    const again = await env.engine();
    const st = await again.status(id.slice(0, 12));
    expect(st.state).toBe('SANDBOX_READY');
    expect(st.trace.length).toBeGreaterThan(0);
    // the name is still reserved after the restart
    await expect(again.run({ config: pod('persist') })).rejects.toSatisfy((e) => hasCode(e, 'AlreadyExists'));
    await again.remove(id);
    engine = again;
  });
});
