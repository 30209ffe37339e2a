import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { execResult, failedExec } from '../../testkit/exec-result';
import { defectCandidate, explainFailure, knownDefect } from '../../electron/engine/cni/plugin-failure';
import { pluginRelease, releaseFromAbout, upstreamOfDebianVersion } from '../../electron/engine/cni/plugin-release';
import { ScriptedRunner } from '../../testkit/fakes/scripted-runner';
import { execPlugin } from '../../electron/engine/cni/plugin-exec';

const PORTMAP_819 = 'could not check ipv6 dnat: chain CNI-DN-d5c63cf2712f9dc23c66f not found in iptables table nat';
const PTP_886 = 'Expected Route {Dst:{IP:10.67.100.0 Mask:ffffff00} GW:<nil>} not found in routing table';
const v4Prev = { prevResult: { ips: [{ address: '10.65.7.2/24' }] } };

describe('plugin errors a person can act on', () => {
  it.each([
    [
      'ipvlan',
      'failed to create ipvlan: operation not supported',
      'this kernel has no ipvlan support: the ipvlan module is not loaded or not built',
    ],
    [
      'vlan',
      'failed to create vlan: operation not supported',
      'this kernel has no vlan support: the 8021q module is not loaded or not built',
    ],
    [
      'macvlan',
      'failed to create macvlan: operation not supported',
      'this kernel has no macvlan support: the macvlan module is not loaded or not built',
    ],
    ['vrf', 'could not add VRF vrf0: operation not supported', 'this kernel has no vrf support: the vrf module is not loaded or not built'],
  ])('%s: a kernel without the link kind', (type, msg, want) => {
    expect(explainFailure({ type, verb: 'ADD', msg })).toBe(want);
  });

  it('"Link not found" names the link from the config field and the plugin', () => {
    expect(explainFailure({ type: 'macvlan', verb: 'ADD', msg: 'Link not found', conf: { master: 'eth9' } })).toBe(
      'link "eth9" (macvlan\'s "master") does not exist in the host network namespace',
    );
    expect(
      explainFailure({ type: 'host-device', verb: 'CHECK', msg: 'failed to find host device: Link not found', conf: { device: 'ens5' } }),
    ).toBe('link "ens5" (host-device\'s "device") does not exist in the host network namespace');
  });

  it('leaves alone what it cannot explain: a DEL, a field not set, another error', () => {
    expect(explainFailure({ type: 'macvlan', verb: 'DEL', msg: 'Link not found', conf: { master: 'eth9' } })).toBeUndefined();
    expect(explainFailure({ type: 'macvlan', verb: 'ADD', msg: 'Link not found', conf: {} })).toBeUndefined();
    expect(explainFailure({ type: 'bridge', verb: 'ADD', msg: 'failed to allocate for range 0' })).toBeUndefined();
  });
});

describe('known defects, recognised by plugin, verb, text and release', () => {
  it('portmap ≤ 1.2.0 CHECK of an IPv4-only pod', () => {
    const f = { type: 'portmap', verb: 'CHECK', msg: PORTMAP_819, conf: v4Prev };
    expect(knownDefect(f, '1.1.1')).toMatchObject({
      version: '1.1.1',
      reference: 'https://github.com/containernetworking/plugins/issues/819',
    });
    expect(knownDefect(f, '1.3.0')).toBeUndefined();
    expect(knownDefect(f, undefined)).toBeUndefined();
    // a pod that has IPv6 really lacks its IPv6 rules: that is a failure
    expect(
      defectCandidate({ ...f, conf: { prevResult: { ips: [{ address: '10.65.7.2/24' }, { address: 'fd00:65::2/64' }] } } }),
    ).toBeUndefined();
    expect(defectCandidate({ ...f, verb: 'ADD' })).toBeUndefined();
  });

  it('portmap ≤ 1.2.0 CHECK of a dual-stack pod: its IPv4 rules looked for in ip6tables', () => {
    // portmap 1.1.1's chain.check prints the rules it looked for ([][]string through %s)
    const rules =
      '[[-p tcp --dport 21660 -j CNI-HOSTPORT-SETMARK -s 10.65.8.0/24] [-p tcp --dport 21660 -j DNAT --to-destination 10.65.8.2:80]]';
    const msg = `could not check ipv6 dnat: rule ${rules} in chain CNI-DN-0f5d1c2e8a6b4f0e9a1c2 not found in table nat`;
    const dual = { prevResult: { ips: [{ address: '10.65.8.2/24' }, { address: 'fd00:65:8::2/64' }] } };
    const f = { type: 'portmap', verb: 'CHECK', msg, conf: dual };
    expect(knownDefect(f, '1.1.1')).toMatchObject({ version: '1.1.1', explanation: expect.stringMatching(/dual-stack/) });
    expect(knownDefect(f, '1.3.0')).toBeUndefined();
    // the IPv6 rules really missing from ip6tables name the IPv6 address: a failure, not the defect
    const v6Missing = msg.replace('--to-destination 10.65.8.2:80', '--to-destination [fd00:65:8::2]:80');
    expect(defectCandidate({ ...f, msg: v6Missing })).toBeUndefined();
    // IPv4 rules missing from iptables are reported as "ipv4 dnat": a failure
    expect(defectCandidate({ ...f, msg: msg.replace('ipv6 dnat', 'ipv4 dnat') })).toBeUndefined();
    // an IPv4-only pod never takes this path (its ip6tables has no chain at all)
    expect(defectCandidate({ ...f, conf: v4Prev })).toBeUndefined();
  });

  it('bandwidth ≤ 1.9.0 CHECK of a pod with no bandwidth: a nil dereference', () => {
    // as describeFailure words a plugin that printed nothing on stdout and a Go panic on stderr
    const panic = [
      'panic: runtime error: invalid memory address or nil pointer dereference',
      '[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x536ff6]',
      '',
      'goroutine 1 [running]:',
      'main.cmdCheck(0xc0000c4770)',
      '\tgithub.com/containernetworking/plugins/plugins/meta/bandwidth/main.go:301 +0x2d6',
    ].join('\n');
    const msg = `netplugin failed: ${JSON.stringify(panic)}: exit status 2`;
    const f = { type: 'bandwidth', verb: 'CHECK', msg, conf: { type: 'bandwidth', runtimeConfig: {} } };
    expect(knownDefect(f, '1.1.1')).toMatchObject({ reference: 'https://github.com/containernetworking/plugins/issues/1221' });
    expect(knownDefect(f, '1.9.1')).toBeUndefined();
    // with limits, a panic is not this defect
    expect(defectCandidate({ ...f, conf: { runtimeConfig: { bandwidth: { ingressRate: 1000 } } } })).toBeUndefined();
    expect(defectCandidate({ ...f, conf: { ingressRate: 1000 } })).toBeUndefined();
    expect(defectCandidate({ ...f, verb: 'ADD' })).toBeUndefined();
  });

  it('ptp ≤ 1.2.0 CHECK of a non-default route', () => {
    expect(knownDefect({ type: 'ptp', verb: 'CHECK', msg: PTP_886 }, '1.1.1')?.reference).toBe(
      'https://github.com/containernetworking/plugins/issues/886',
    );
    // bridge has the same route check, but only a route its cached result lists without a gateway is the defect
    expect(knownDefect({ type: 'bridge', verb: 'CHECK', msg: PTP_886 }, '1.1.1')).toBeUndefined();
  });

  it('bridge ≤ 1.2.0 CHECK of an IPAM route without a gateway (containerd pods with a range route)', () => {
    const msg = 'Expected Route {Dst:{IP:10.240.0.0 Mask:ffff0000} GW:<nil>} not found in routing table';
    const prev = (routes: object[]) => ({ prevResult: { ips: [{ address: '10.240.0.2/24', gateway: '10.240.0.1' }], routes } });
    const asCached = prev([{ dst: '10.240.0.0/16' }]);
    expect(knownDefect({ type: 'bridge', verb: 'CHECK', msg, conf: asCached }, '1.1.1')).toMatchObject({
      reference: 'https://github.com/containernetworking/plugins/issues/886',
      version: '1.1.1',
    });
    // fixed in 1.3.0; a route the result gives a gateway, or no such route at all: a real failure
    expect(knownDefect({ type: 'bridge', verb: 'CHECK', msg, conf: asCached }, '1.3.0')).toBeUndefined();
    expect(
      knownDefect({ type: 'bridge', verb: 'CHECK', msg, conf: prev([{ dst: '10.240.0.0/16', gw: '10.240.0.1' }]) }, '1.1.1'),
    ).toBeUndefined();
    expect(knownDefect({ type: 'bridge', verb: 'CHECK', msg, conf: prev([{ dst: '10.241.0.0/16' }]) }, '1.1.1')).toBeUndefined();
  });

  it('reads the release from the binary or from the Debian package version', () => {
    expect(releaseFromAbout('CNI ptp plugin v1.3.0\nCNI protocol versions supported: 1.0.0')).toBe('1.3.0');
    expect(releaseFromAbout('CNI ptp plugin version unknown')).toBeUndefined();
    expect(upstreamOfDebianVersion('1.1.1+ds1-3+b5')).toBe('1.1.1');
    expect(upstreamOfDebianVersion('1:0.9.1-2')).toBe('0.9.1');
  });

  it('a release lookup cut short by its timeout is asked again at the next failure, not kept as "unknown"', async () => {
    // a query that ran out of time (most likely what a CI run's 5.6 s cnicheck met) must not leave the known defect
    // unrecognised for good in a long-running engine
    const binary = '/opt/podscope-test-cni/bridge-timeout';
    const runner = new ScriptedRunner([
      { match: binary, answer: { stdout: 'CNI bridge plugin version unknown\n' } },
      { match: `dpkg-query -S ${binary}`, answer: { exitCode: null, signal: 'SIGKILL', timedOut: true }, times: 1 },
      { match: `dpkg-query -S ${binary}`, answer: { stdout: `containernetworking-plugins: ${binary}\n` } },
      { match: 'dpkg-query -W -f=${Version} containernetworking-plugins', answer: { stdout: '1.1.1+ds1-3+b5' } },
    ]);
    expect(await pluginRelease(runner, binary)).toBeUndefined();
    expect(await pluginRelease(runner, binary)).toBe('1.1.1');
    // a whole answer is kept: no third lookup
    expect(await pluginRelease(runner, binary)).toBe('1.1.1');
    expect(runner.lines.filter((l) => l.startsWith('dpkg-query -S'))).toHaveLength(2);
    expect(runner.calls.every((c) => c.timeoutMs >= 30_000)).toBe(true);
  });
});

describe("execPlugin words the error and keeps the plugin's own text in details", () => {
  async function run(
    type: string,
    verb: 'ADD' | 'CHECK',
    msg: string,
    stdin: object,
    answer: (req: ExecRequest) => ExecResult | undefined,
  ) {
    const dir = await mkdtemp(path.join(tmpdir(), 'psc-cni-advice-'));
    try {
      await writeFile(path.join(dir, type), '');
      const runner: ProcessRunner = {
        run: async (req) => answer(req) ?? failedExec({ stdout: JSON.stringify({ code: 11, msg }) }),
      };
      const ctx = { runner, binDirs: [dir], baseEnv: {}, timeoutMs: 1000, record: () => {} };
      const inv = { network: 'n', ifName: 'eth0', verb, index: 1, type, stdin: JSON.stringify(stdin), cniEnv: { CNI_COMMAND: verb } };
      return await execPlugin(ctx, inv, () => undefined).catch((e: unknown) => e as Error & { details: Record<string, unknown> });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('a kernel capability error', async () => {
    const e = await run('ipvlan', 'ADD', 'failed to create ipvlan: operation not supported', { master: 'eth0' }, () => undefined);
    expect(e!.message).toBe(
      'plugin type="ipvlan" failed (add): this kernel has no ipvlan support: the ipvlan module is not loaded or not built (the plugin said: failed to create ipvlan: operation not supported)',
    );
    expect(e!.details).toMatchObject({
      pluginError: 'failed to create ipvlan: operation not supported',
      cniMsg: 'failed to create ipvlan: operation not supported',
    });
  });

  it('a known defect: the release comes from dpkg when the binary does not say', async () => {
    const asked: string[] = [];
    const e = await run('portmap', 'CHECK', PORTMAP_819, v4Prev, (req) => {
      if (req.file === 'dpkg-query') {
        asked.push(req.args!.join(' '));
        return req.args![0] === '-S'
          ? execResult({ stdout: `containernetworking-plugins: ${req.args![1]}\n` })
          : execResult({ stdout: '1.1.1+ds1-3+b5' });
      }
      if (req.env?.CNI_COMMAND === '') return execResult({ stderr: 'CNI portmap plugin version unknown' });
      return undefined;
    });
    expect(asked).toEqual([expect.stringMatching(/^-S .*\/portmap$/), '-W -f=${Version} containernetworking-plugins']);
    expect(e!.details.knownDefect).toMatchObject({
      version: '1.1.1',
      reference: 'https://github.com/containernetworking/plugins/issues/819',
    });
    expect(e!.message).toContain(
      `${PORTMAP_819} (a known defect of portmap 1.1.1, https://github.com/containernetworking/plugins/issues/819:`,
    );
  });
});
