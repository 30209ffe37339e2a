/**
 * Real unwind cases with Debian's plugins and runc: a conflist whose second plugin does not exist (the bridge's
 * DEL must still run), and a pause container that dies (recorded; Stop on NOTREADY releases the whole network).
 * Every check goes through the shared leak checker. Needs root.
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { findLeftovers, formatLeftovers, subnetTextPrefix, sweepLeftovers, type LeakScope } from '../../testkit/leak-check';
import { conflist, createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { escapeRe } from '../../testkit/until';
import type { TraceEntry } from '../../shared/domain/sandbox';
import { whatStopReleases } from '../../shared/domain/sandbox-release';
import { podscope as podscopeCli } from './helpers/podscope-cli';

/** how the env's IPv4 / IPv6 addresses start, escaped for a RegExp */
const v4 = (env: RealEnv) => escapeRe(subnetTextPrefix(env.subnet4));
const v6 = (env: RealEnv) => escapeRe(subnetTextPrefix(env.subnet6!));

function scopeOf(env: RealEnv, extra: Partial<LeakScope> = {}): LeakScope {
  const o = env.options;
  return {
    networks: [env.network],
    ipamDir: env.ipamDir,
    cacheDir: o.cniCacheDir,
    stateDir: o.stateDir,
    runDir: o.runDir,
    bridge: env.bridge,
    subnets: [env.subnet4, env.subnet6!],
    ...extra,
  };
}

describe('a conflist with a "nonexistent" plugin after bridge (host-local v4+v6, ipMasq)', () => {
  let env: RealEnv;
  let engine: SandboxEngine;
  const spec = { tag: 'r1-nx', ipMasq: true };

  beforeAll(async () => {
    env = await createRealEnv(spec);
    const list = conflist({ ...spec, subnet: env.lease!.octet, bridge: env.bridge }, env.ipamDir) as { plugins: object[] };
    list.plugins = [list.plugins[0]!, { type: 'nonexistent' }];
    writeFileSync(join(env.dir, 'net.d', '10-podscope-test.conflist'), JSON.stringify(list));
    engine = await env.engine();
  }, 60_000);

  afterAll(async () => {
    if (!env) return;
    await env.teardown();
    sweepLeftovers(scopeOf(env));
  }, 60_000);

  // The CNI spec's list DEL would stop at the missing plugin and never reach the bridge; a plugin that was never
  // executed holds nothing, so Podscope skips it and the bridge releases its addresses, veth and ipMasq chains.
  it('the failed run DELs the bridge (the plugin that ran) and skips the one never executed: nothing is reserved or left, nothing is kept', async () => {
    const trace: TraceEntry[] = [];
    const unsubscribe = engine.subscribe((e) => {
      if (e.type === 'sandbox.progress') trace.push(e.entry);
    });
    const err = (await engine
      .run({ config: { metadata: { name: 'nx', namespace: 'r1-unwind', uid: 'uid-nx' } } })
      .catch((e: unknown) => e)) as Error;
    unsubscribe();
    expect(err.message).toMatch(/failed to find plugin "nonexistent"/);
    const id = /sandbox "([0-9a-f]{64})"/.exec(err.message)![1]!;
    // the bridge really did acquire v4 + v6 before the failure, and its DEL ran; the missing plugin's DEL did not
    const adds = trace.filter((t) => t.plugin?.verb === 'ADD' && t.plugin.type === 'bridge');
    expect(adds).toHaveLength(1);
    expect(JSON.parse(adds[0]!.plugin!.stdout).ips.map((ip: { address: string }) => ip.address)).toEqual([
      expect.stringMatching(new RegExp(String.raw`^${v4(env)}\d+\/24$`)),
      expect.stringMatching(new RegExp(String.raw`^${v6(env)}:[0-9a-f]+\/64$`)),
    ]);
    const dels = trace.filter((t) => t.plugin?.verb === 'DEL' && t.plugin.network === env.network).map((t) => `${t.plugin!.type}:${t.ok}`);
    expect(dels).toEqual(['bridge:true']);
    expect(await engine.list()).toEqual([]);
    const netnsPath = trace.find((t) => t.step === 'netns.create')?.detail?.path as string;
    expect(netnsPath).toBeTruthy();
    expect(formatLeftovers(findLeftovers(scopeOf(env, { ids: [id], netnsPaths: [netnsPath] })))).toBe('');
  }, 60_000);
});

describe('a pause container that dies', () => {
  let env: RealEnv;
  let engine: SandboxEngine;

  beforeAll(async () => {
    env = await createRealEnv({ tag: 'r1-px', ipMasq: true });
    engine = await env.engine();
  }, 60_000);

  afterAll(async () => {
    if (!env) return;
    await env.teardown();
    sweepLeftovers(scopeOf(env));
  }, 60_000);

  it('is recorded (exit, time, trace), the pod says why it is NOTREADY, and Stop releases netns, IPs, DNAT and tbf as containerd does', async () => {
    const { id } = await engine.run({
      config: {
        metadata: { name: 'px', namespace: 'r1-unwind', uid: 'uid-px' },
        port_mappings: [{ container_port: 80, host_port: env.port(0) }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '5M' },
      },
    });
    const before = await engine.status(id);
    process.kill(before.pause.pid!, 'SIGKILL');
    // status() looks at the pid itself; the pause is gone once its /proc entry is (bounded wait, not a timing assertion)
    let st = await engine.status(id);
    for (let i = 0; i < 100 && st.state === 'SANDBOX_READY'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      st = await engine.status(id);
    }
    expect(st.state).toBe('SANDBOX_NOTREADY');
    expect(st.pauseExit?.at).toMatch(/^\d{4}-\d\d-\d\dT/);
    if (st.pauseExit?.signal !== undefined) expect(st.pauseExit.signal).toBe('SIGKILL');
    // the pause runs under conmon, whose exit file gives the code (128+9) and the finish time
    expect(before.pause.monitorPid).toBeGreaterThan(0);
    expect(st.pauseExit).toMatchObject({ exitCode: 137, signal: 'SIGKILL', finishedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(st.notReadyReason).toMatch(/^pause exited (with signal SIGKILL|\(exit status not observable.*\)) at /);
    expect(st.trace.find((t) => t.phase === 'watch' && t.step === 'pause.exit')?.label).toMatch(/keeps its network until stopped/);
    // the network is still held, and the detail says what Stop will release
    const heldList = findLeftovers(scopeOf(env, { ids: [id], netnsPaths: [before.netnsPath!] }));
    const held = heldList.map((l) => l.kind);
    expect(held).toEqual(expect.arrayContaining(['netns', 'ipam', 'iptables', 'ip6tables', 'qdisc']));
    const release = whatStopReleases(st).join('\n');
    expect(release).toMatch(new RegExp(String.raw`CNI DEL of every network: addresses ${v4(env)}\d+, ${v6(env)}:`));
    expect(release).toMatch(new RegExp(`host port DNAT ${env.port(0)}/tcp→80`));
    expect(release).toMatch(/bandwidth shaping/);
    expect(release).toMatch(new RegExp(`network namespace ${st.netnsPath}`));

    await engine.stop(id);
    // after the stop only the record, the runc container entry and the files are left: remove's part
    const afterStop = findLeftovers(scopeOf(env, { ids: [id], netnsPaths: [before.netnsPath!] })).filter(
      (l) => !['record', 'runc', 'dir'].includes(l.kind),
    );
    expect(formatLeftovers(afterStop)).toBe('');
    await engine.remove(id);
    expect(formatLeftovers(findLeftovers(scopeOf(env, { ids: [id], netnsPaths: [before.netnsPath!] })))).toBe('');
  }, 60_000);
});

describe('podscope CLI with a DEL that keeps failing (wrapped bridge)', () => {
  let env: RealEnv;
  let flags: string[];
  let wrapDir: string;
  const podscope = (...args: string[]) => podscopeCli(...args, ...flags);

  beforeAll(async () => {
    env = await createRealEnv({ tag: 'r1-cl', ipMasq: true });
    wrapDir = join(env.dir, 'wrap-bin');
    mkdirSync(wrapDir);
    // portmap fails after its real ADD; bridge's DEL always fails (the fake at the OS boundary): cleanup stays pending
    writeFileSync(
      join(wrapDir, 'portmap'),
      '#!/bin/sh\nif [ "$CNI_COMMAND" = ADD ]; then /usr/lib/cni/portmap >/dev/null; printf \'{"cniVersion":"1.0.0","code":999,"msg":"injected portmap ADD failure"}\'; exit 1; fi\nexec /usr/lib/cni/portmap\n',
    );
    writeFileSync(
      join(wrapDir, 'bridge'),
      '#!/bin/sh\nif [ "$CNI_COMMAND" = DEL ]; then cat >/dev/null; printf \'{"cniVersion":"1.0.0","code":999,"msg":"injected bridge DEL failure"}\'; exit 1; fi\nexec /usr/lib/cni/bridge\n',
    );
    chmodSync(join(wrapDir, 'portmap'), 0o755);
    chmodSync(join(wrapDir, 'bridge'), 0o755);
    const o = env.options;
    flags = [
      '--cni-conf-dir',
      o.cniConfDir!,
      '--cni-bin-dir',
      wrapDir,
      '--cni-bin-dir',
      '/usr/lib/cni',
      '--cni-cache-dir',
      o.cniCacheDir!,
      '--state-dir',
      o.stateDir!,
      '--run-dir',
      o.runDir!,
      '--plugin-timeout',
      '10000',
    ];
  }, 60_000);

  afterAll(async () => {
    if (!env) return;
    rmSync(wrapDir, { recursive: true, force: true });
    await env.teardown();
    sweepLeftovers(scopeOf(env));
  }, 60_000);

  it('inspectp names the pending cleanup; rmp refuses; rmp -f removes it only after printing what it leaves on the host', async () => {
    const config = join(env.dir, 'pod.json');
    writeFileSync(
      config,
      JSON.stringify({
        metadata: { name: 'cl', namespace: 'r1-unwind', uid: 'uid-cl' },
        port_mappings: [{ container_port: 80, host_port: env.port(0) }],
      }),
    );
    const runp = await podscope('runp', config);
    expect(runp.code).toBe(6);
    expect(runp.stderr).toMatch(
      new RegExp(
        String.raw`injected portmap ADD failure \(network "${env.bridge}", file [^)]*\); cleanup pending .*CNI DEL of bridge #0 on ${env.bridge}\/eth0 \(holds IPAM reservation ${v4(env)}\d+\/24, ${v6(env)}:`,
      ),
    );
    const id = /sandbox "([0-9a-f]{64})"/.exec(runp.stderr)![1]!;
    const netnsPath = (JSON.parse((await podscope('inspectp', '-o', 'json', id)).stdout) as { netnsPath: string }).netnsPath;
    const inspect = await podscope('inspectp', id);
    expect(inspect.stdout).toMatch(/State\s+SANDBOX_NOTREADY/);
    expect(inspect.stdout).toMatch(
      new RegExp(String.raw`Cleanup pending\s+CNI DEL of bridge #0 on ${env.bridge}\/eth0 \(holds IPAM reservation ${v4(env)}`),
    );
    expect(inspect.stdout).toMatch(new RegExp(String.raw`Stop releases\s+retry: CNI DEL of bridge #0 on ${env.bridge}\/eth0`));
    const rmp = await podscope('rmp', id);
    expect(rmp.code).toBe(6);
    expect((await podscope('pods', '-q')).stdout.trim()).toBe(id);
    const forced = await podscope('rmp', '-f', id);
    expect(forced.code).toBe(6);
    expect(forced.stderr).toMatch(
      new RegExp(
        String.raw`removed by force, but its cleanup did not finish; left behind on the host \(remove by hand\): CNI DEL of bridge #0 on ${env.bridge}\/eth0 \(holds IPAM reservation ${v4(env)}\d+\/24`,
      ),
    );
    expect((await podscope('pods', '-q')).stdout.trim()).toBe('');
    // it told the truth: the bridge's reservations (v4 + v6) are still on the host, as said
    const scope = scopeOf(env, { ids: [id], netnsPaths: [netnsPath] });
    expect(findLeftovers(scope).filter((l) => l.kind === 'ipam')).toHaveLength(2);
    sweepLeftovers(scope);
    expect(formatLeftovers(findLeftovers(scope))).toBe('');
  }, 120_000);
});
