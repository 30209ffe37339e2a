import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSocketReason, parseDropReasons, parseKfreeSkb } from '../../electron/engine/trace/drop-reasons';
import { parsePcap, pcapngBlocks, writePcapng } from '../../electron/engine/trace/capture';
import {
  linesOfFlow,
  parseTraceLine,
  parseTraceOutput,
  podscopeTraceRules,
  traceComment,
  traceRulesRestore,
  traceRulesOfPorts,
} from '../../electron/engine/kernel/netfilter-trace';
import { coveringRoute, coverLength, parseRouteGet, routeGetArgs, routeGetError } from '../../electron/engine/kernel/route-get';
import { natOf, parseConntrack } from '../../electron/engine/trace/conntrack';
import type { FlowRecord, FlowSpec, TraceNetns } from '../../electron/engine/trace/flow-tracer';
import { RuleOwners } from '../../electron/engine/trace/ownership';
import { buildTrace, ruleVerdict } from '../../electron/engine/trace/steps';
import type { ProbePath } from '../../shared/domain/probe';
import { judge } from '../../electron/engine/probe/judge';
import type { PlannedConnect } from '../../electron/engine/probe/plan';

const planned: PlannedConnect = {
  path: { kind: 'gateway', from: 'pod', to: '10.180.0.1:4000', proto: 'tcp', verdict: 'timeout', measured: false, note: '', family: 4 },
  fromAgent: 'a'.repeat(64),
  host: '10.180.0.1',
  port: 4000,
  expect: 'host',
  existing: false,
};

describe('connect outcomes become verdicts', () => {
  it('a connect that failed at once with a route error is unreachable, naming the errno, not a timeout', () => {
    const p = judge(planned, { kind: 'unreachable', error: 'EINVAL' }, 'n', [], undefined);
    expect(p).toMatchObject({ verdict: 'unreachable', measured: true });
    expect(p.note).toContain('EINVAL');
    expect(p.note).toContain('blackhole');
    expect(judge(planned, { kind: 'unreachable', error: 'ENETUNREACH' }, 'n', [], undefined).note).toContain('no route');
  });

  it('an unexplained connect error stays a timeout with the error named', () => {
    expect(judge(planned, { kind: 'error', error: 'closed' }, 'n', [], undefined)).toMatchObject({
      verdict: 'timeout',
      note: 'not connected: closed',
    });
  });
});

// ---- the kernel readers, over output recorded on this machine (iptables 1.8.9 nf_tables, iproute2, conntrack 1.4.7) ----

const MONITOR = readFileSync(join(__dirname, 'fixtures/xtables-monitor-trace.txt'), 'utf8');
const WEB = 'e0587aec016495cd223f0d0b52e35badbf474bd46c1c465f6c2c62894b50d08f';
const PEER = 'ac63270ee1300fe4dbe1283a1b41c567eaafc3290837900ac8dc2f8463bf5bd7';
const REJECTED = '4cd108a4e74a369838a83ab0421707e090214721199e3cc8ac81d4cb9319411d';

const NFT = readFileSync(join(__dirname, 'fixtures/nft-monitor-trace.txt'), 'utf8');

describe('nft -a monitor trace lines', () => {
  it('reads packet lines (ports, addresses, interfaces, flags) and rule lines (table, chain, handle, verdict) as the xtables-monitor ones read', () => {
    const lines = parseTraceOutput(NFT);
    const packet = lines.find((l) => l.type === 'packet' && l.id === 'f4b1b9bc' && l.fields.DPORT === '8080')!;
    expect(packet).toMatchObject({
      family: 4,
      fields: { OUT: 'lo', SRC: '127.0.0.1', DST: '10.131.0.2', SPORT: '22363' },
      flags: ['SYN'],
    });
    const rules = lines.filter((l) => l.type === 'rule' && l.id === 'f4b1b9bc');
    expect(rules.map((l) => l.type === 'rule' && [l.table, l.chain, l.what, l.handle, l.verdict])).toEqual([
      ['raw', 'OUTPUT', 'rule', 1829, 'CONTINUE'],
      ['raw', 'OUTPUT', 'policy', undefined, 'ACCEPT'],
      ['nat', 'OUTPUT', 'rule', 16808, 'JUMP:CNI-HOSTPORT-DNAT'],
      ['nat', 'CNI-HOSTPORT-DNAT', 'rule', 16813, 'JUMP:CNI-DN-0f40c1abfb00369bb5ea5'],
      ['nat', 'CNI-DN-0f40c1abfb00369bb5ea5', 'rule', 16811, 'JUMP:CNI-HOSTPORT-SETMARK'],
      ['nat', 'CNI-HOSTPORT-SETMARK', 'rule', 16802, 'CONTINUE'],
      ['nat', 'CNI-DN-0f40c1abfb00369bb5ea5', 'rule', 16812, 'ACCEPT'],
      ['filter', 'OUTPUT', 'rule', 892, 'DROP'],
    ]);
    // a rule nft had cached is named in its syntax (the iptables form is read back by its place afterwards)
    const v6 = lines.find((l) => l.type === 'rule' && l.family === 6 && l.table === 'nat' && l.what === 'rule')!;
    expect(v6).toMatchObject({ table: 'nat', chain: 'PREROUTING', handle: 587, verdict: 'JUMP:CNI-HOSTPORT-DNAT' });
    expect(v6.type === 'rule' && v6.nftRule).toBe('fib daddr type local counter packets 3923 bytes 2677375 jump CNI-HOSTPORT-DNAT');
    expect(v6).not.toHaveProperty('rule');
    // a TRACE rule nft had cached is told apart, so no step shows it
    expect(
      parseTraceLine(
        'trace id 63ab0861 ip raw OUTPUT rule meta l4proto icmp  counter packets 0 bytes 0 meta nftrace set 1 # handle 4 (verdict continue)',
      ),
    ).toMatchObject({ handle: 4, verdict: 'CONTINUE', marksTrace: true });
    expect(parseTraceLine('trace id 63ab0861 bridge filter FORWARD policy accept')).toBeUndefined();
    expect(parseTraceLine('# ERROR: We lost some netlink events!')).toBeUndefined();
  });

  it("keeps one flow's lines by its source port, the way out and back, beside another flow's on the same monitor", () => {
    const lines = parseTraceOutput(NFT);
    const flow = linesOfFlow(lines, 22363);
    expect(new Set(flow.map((l) => l.id))).toEqual(new Set(['f4b1b9bc']));
    expect(flow.every((l) => !l.reply)).toBe(true);
    expect(linesOfFlow(lines, 31245).map((l) => l.id)).toContain('8bc083fb');
  });
});

describe('xtables-monitor --trace lines', () => {
  it('reads PACKET lines (5-tuple, interfaces, flags) and TRACE lines (table, chain, handle, verdict, rule as iptables-save prints it)', () => {
    const lines = parseTraceOutput(MONITOR);
    const packet = lines.find((l) => l.type === 'packet' && l.id === '61bfb948')!;
    expect(packet).toMatchObject({
      family: 4,
      fields: { OUT: 'lo', SRC: '127.0.0.1', DST: '127.0.0.1', SPORT: '27673', DPORT: '25998' },
      flags: expect.arrayContaining(['SYN', 'DF']),
    });
    const jump = lines.find((l) => l.type === 'rule' && l.id === '61bfb948' && l.chain === 'CNI-HOSTPORT-DNAT')!;
    expect(jump).toMatchObject({ table: 'nat', what: 'rule', handle: 0x156, verdict: 'JUMP:CNI-DN-f0050dadfeda64aa67857' });
    expect(jump.type === 'rule' && jump.rule).toMatch(/^-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \\"psc-trx\\" id: /);
    const policy = lines.find((l) => l.type === 'rule' && l.id === '61bfb948' && l.table === 'filter')!;
    expect(policy).toMatchObject({ chain: 'OUTPUT', what: 'policy', verdict: 'ACCEPT' });
    expect(policy).not.toHaveProperty('rule');
    expect(parseTraceLine('not a trace line')).toBeUndefined();
  });

  it("keeps only one flow's packets (by its source port), both ways, even with other flows on the same monitor", () => {
    const lines = parseTraceOutput(MONITOR);
    const peer = linesOfFlow(lines, 23293);
    expect(new Set(peer.map((l) => l.id))).toEqual(new Set(['6ff507b9', '73ecd52a', '98a1f9ea']));
    expect(peer.filter((l) => l.id === '73ecd52a').every((l) => l.reply)).toBe(true);
    expect(peer.filter((l) => l.id === '6ff507b9').every((l) => !l.reply)).toBe(true);
    const web = linesOfFlow(lines, 27673);
    expect(web.some((l) => l.type === 'rule' && l.rule?.includes('--to-destination 10.181.0.2:8080'))).toBe(true);
    expect(web.some((l) => l.id === '6ff507b9' || l.id === '9a9b361e')).toBe(false);
  });

  it("one trace's own TRACE rules: this comment and only these ports, never another trace's of the same engine", () => {
    const c = traceComment(42);
    const rule = (chain: string, ports: string, comment = c) =>
      `-A ${chain} -p tcp -m multiport --ports ${ports} -m comment --comment "${comment}" -j TRACE`;
    const lines = [
      '-P OUTPUT ACCEPT',
      rule('OUTPUT', '21000,21001'),
      rule('OUTPUT', '21000,21001'),
      rule('PREROUTING', '21001'),
      rule('OUTPUT', '21000,22000'),
      rule('OUTPUT', '21000', traceComment(43)),
      '-A OUTPUT -p tcp -m multiport --ports 21000 -j ACCEPT',
    ];
    expect(traceRulesOfPorts(lines, c, [21000, 21001])).toEqual([lines[1], lines[2], lines[3]]);
    expect(traceRulesOfPorts(lines, c, [22000])).toEqual([]);
  });

  it('the TRACE rules carry the engine pid; the sweep finds only Podscope TRACE rules', () => {
    const add = traceRulesRestore('-I', [21000, 21001], traceComment(42));
    expect(add).toBe(
      '*raw\n-I PREROUTING -p tcp -m multiport --ports 21000,21001 -m comment --comment "podscope-trace pid=42" -j TRACE\n' +
        '-I OUTPUT -p tcp -m multiport --ports 21000,21001 -m comment --comment "podscope-trace pid=42" -j TRACE\n' +
        '-I PREROUTING -p udp -m multiport --ports 21000,21001 -m comment --comment "podscope-trace pid=42" -j TRACE\n' +
        '-I OUTPUT -p udp -m multiport --ports 21000,21001 -m comment --comment "podscope-trace pid=42" -j TRACE\nCOMMIT\n',
    );
    // multiport takes 15 ports at most: 16 ports are two rules per chain and protocol
    expect(
      traceRulesRestore(
        '-D',
        Array.from({ length: 16 }, (_, i) => 21000 + i),
        'c',
      )
        .split('\n')
        .filter((l) => l.startsWith('-D')).length,
    ).toBe(8);
    expect(
      podscopeTraceRules([
        '-P OUTPUT ACCEPT',
        '-A OUTPUT -p tcp -m multiport --ports 21000 -m comment --comment "podscope-trace pid=42" -j TRACE',
        '-A OUTPUT -p tcp -m comment --comment "admin-trace" -j TRACE',
        '-A OUTPUT -p tcp -m comment --comment "podscope-trace pid=7" -j ACCEPT',
      ]),
    ).toEqual([{ rule: '-A OUTPUT -p tcp -m multiport --ports 21000 -m comment --comment "podscope-trace pid=42" -j TRACE', pid: 42 }]);
  });
});

describe('ip route get', () => {
  it('reads the decision, and for a refused lookup the most specific covering route (blackhole beats the subnet)', () => {
    expect(parseRouteGet('[{"dst":"10.181.0.1","dev":"eth0","prefsrc":"10.181.0.2","flags":[],"uid":0,"cache":[]}]')).toEqual({
      ok: true,
      type: 'unicast',
      dev: 'eth0',
      prefsrc: '10.181.0.2',
      gateway: undefined,
      table: undefined,
      text: '10.181.0.1 dev eth0 src 10.181.0.2',
    });
    expect(
      parseRouteGet('[{"type":"local","dst":"10.189.0.2","dev":"lo","prefsrc":"10.189.0.2","flags":[],"uid":0,"cache":["local"]}]'),
    ).toMatchObject({
      type: 'local',
      text: 'local 10.189.0.2 dev lo src 10.189.0.2',
    });
    expect(routeGetError('RTNETLINK answers: Invalid argument\n')).toBe('Invalid argument');
    const table =
      '[{"dst":"default","gateway":"10.180.0.1","dev":"eth0","flags":[]},{"dst":"10.180.0.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"10.180.0.2","flags":[]},' +
      '{"type":"blackhole","dst":"10.180.0.1","flags":[]},{"type":"local","dst":"10.180.0.2","dev":"eth0","table":"local","flags":[]}]';
    expect(coveringRoute(table, '10.180.0.1')).toEqual({
      type: 'blackhole',
      dst: '10.180.0.1',
      table: undefined,
      text: 'blackhole 10.180.0.1',
    });
    expect(coveringRoute(table, '10.180.0.9')?.dst).toBe('10.180.0.0/24');
    expect(coveringRoute(table, '192.0.2.1')?.dst).toBe('default');
    expect(coverLength('fd00:180::/64', 'fd00:180::1')).toBe(64);
    expect(coverLength('fd00:181::/64', 'fd00:180::1')).toBe(-1);
    expect(coverLength('10.180.0.0/24', 'fd00:180::1')).toBe(-1);
    expect(routeGetArgs({ dst: '10.180.0.1', from: '10.180.0.2', sport: 21000, dport: 80 })).toEqual([
      '-j',
      'route',
      'get',
      '10.180.0.1',
      'from',
      '10.180.0.2',
      'ipproto',
      'tcp',
      'sport',
      '21000',
      'dport',
      '80',
    ]);
  });
});

describe('conntrack -L', () => {
  it('reads state, both tuples and flags, and names the NAT applied', () => {
    const [e] = parseConntrack(
      'tcp      6 9 CLOSE src=127.0.0.1 dst=127.0.0.1 sport=27673 dport=25998 src=10.181.0.2 dst=10.181.0.1 sport=8080 dport=27673 [ASSURED] mark=0 use=1\n' +
        'conntrack v1.4.7 (conntrack-tools): 1 flow entries have been shown.\n',
    );
    expect(e).toMatchObject({
      proto: 'tcp',
      state: 'CLOSE',
      flags: ['ASSURED'],
      orig: { src: '127.0.0.1', sport: 27673, dport: 25998 },
      reply: { src: '10.181.0.2', sport: 8080 },
    });
    expect(natOf(e!)).toBe('DNAT 127.0.0.1:25998 → 10.181.0.2:8080, SNAT 127.0.0.1:27673 → 10.181.0.1:27673');
    const [plain] = parseConntrack(
      'tcp      6 9 CLOSE src=10.181.0.2 dst=10.181.0.1 sport=22000 dport=4000 src=10.181.0.1 dst=10.181.0.2 sport=4000 dport=22000 [ASSURED] mark=0 use=1',
    );
    expect(natOf(plain!)).toBe('');
  });
});

describe('who installed a rule', () => {
  const owners = () =>
    new RuleOwners([
      { id: WEB, network: 'psc-trx', ips: ['10.181.0.2'] },
      { id: PEER, network: 'psc-trx', ips: ['10.181.0.3'] },
    ]);
  const rules = (sport: number) => linesOfFlow(parseTraceOutput(MONITOR), sport).filter((l) => l.type === 'rule');

  it("portmap's per-pod jump names network and sandbox; the CNI-DN chain it enters inherits them; its shared chains name only the plugin", () => {
    const o = owners();
    const got = rules(27673).map((l) => [l.chain, o.ownerOf(l)] as const);
    const own = { plugin: 'portmap', network: 'psc-trx', sandboxId: WEB };
    expect(got.find(([c]) => c === 'CNI-HOSTPORT-DNAT')![1]).toEqual(own);
    expect(got.filter(([c]) => c === 'CNI-DN-f0050dadfeda64aa67857').every(([, w]) => JSON.stringify(w) === JSON.stringify(own))).toBe(
      true,
    );
    expect(got.find(([c]) => c === 'CNI-HOSTPORT-SETMARK')![1]).toEqual({ plugin: 'portmap' });
    expect(got.find(([c]) => c === 'CNI-HOSTPORT-MASQ')![1]).toEqual({ plugin: 'portmap' });
    // portmap's jump from the kernel's nat/OUTPUT into its chain is portmap's; that chain's policy belongs to nobody here
    expect(got.find(([c, w]) => c === 'OUTPUT' && w !== null)![1]).toEqual({ plugin: 'portmap' });
    expect(o.ownerOf({ family: 4, table: 'filter', chain: 'OUTPUT', what: 'policy', verdict: 'ACCEPT' })).toBeNull();
  });

  it("bridge's ipMasq jump and chain are the bridge plugin's, for the sandbox whose id the comment names", () => {
    const o = owners();
    const masq = rules(23293).filter((l) => (l.table === 'nat' && l.chain.startsWith('CNI-4a93')) || l.verdict.startsWith('JUMP:CNI-4a93'));
    expect(masq.length).toBe(2);
    for (const l of masq) expect(o.ownerOf(l)).toEqual({ plugin: 'bridge', network: 'psc-trx', sandboxId: PEER });
  });

  it("a rule whose comment names a sandbox that is not ours is another runtime's (null), and so is an admin's rule", () => {
    const o = owners();
    const r = rules(45555);
    expect(o.ownerOf(r.find((l) => l.chain === 'CNI-HOSTPORT-DNAT')!)).toBeNull();
    expect(o.ownerOf(r.find((l) => l.table === 'filter')!)).toBeNull();
    expect(
      o.ownerOf({
        family: 4,
        table: 'filter',
        chain: 'CNI-FORWARD',
        what: 'rule',
        verdict: 'ACCEPT',
        rule: '-A CNI-FORWARD -d 10.181.0.3/32 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      }),
    ).toEqual({
      plugin: 'firewall',
      network: 'psc-trx',
      sandboxId: PEER,
    });
  });
});

describe('steps and why', () => {
  const host: TraceNetns = { key: 'host', label: 'the host' };
  const pod: TraceNetns = { key: REJECTED, path: '/run/netns/x', label: "the pod's netns" };
  const flow = (sport: number, dport: number): FlowSpec => ({ sport, family: 4, dst: '127.0.0.1', dport, netns: [host, pod], routes: [] });
  const record = (sport: number, routes: FlowRecord['routes'] = []): FlowRecord => ({
    lines: new Map([
      ['host', linesOfFlow(parseTraceOutput(MONITOR), sport)],
      [REJECTED, []],
    ]),
    routes,
    missing: [],
    conntrack: [
      { netns: host, entries: [] },
      { netns: pod, entries: [] },
    ],
  });
  const path = (verdict: ProbePath['verdict']): ProbePath => ({
    kind: 'hostPort',
    from: 'host',
    to: '127.0.0.1:25999',
    proto: 'tcp',
    verdict,
    measured: true,
    note: '',
    family: 4,
  });

  it('a REJECT rule (reported by the kernel as DROP) decides a refused path: named, owned by nobody, the pod not blamed', () => {
    const { steps, why } = buildTrace({
      flow: flow(45555, 25999),
      record: record(45555),
      path: path('refused'),
      outcome: { kind: 'refused' },
      owners: new RuleOwners([]),
      podName: () => undefined,
      target: pod,
    });
    const d = steps.find((s) => s.decisive)!;
    expect(d).toMatchObject({
      kind: 'netfilter',
      table: 'filter',
      chain: 'OUTPUT',
      verdict: 'REJECT',
      owner: null,
      handle: 2,
      interface: 'lo',
    });
    expect(why).toBe(
      'refused by a REJECT rule in filter/OUTPUT of the host: `-A OUTPUT -d 10.181.0.0/24 -p tcp -m tcp --dport 8080 -m comment --comment fw-block -j REJECT --reject-with tcp-reset`, a rule no CNI plugin installed — not by the pod',
    );
    // our own TRACE rule is not a step; the deliver step says the RST came from the rule, in the host
    expect(steps.some((s) => s.rule?.includes('podscope-trace'))).toBe(false);
    expect(steps.at(-1)).toMatchObject({ kind: 'deliver', netns: 'host' });
    expect(steps.find((s) => s.kind === 'conntrack')!.detail).toContain('no conntrack entry');
  });

  it('a reachable path is explained by the DNAT step and its owner; repeated packets make one step each', () => {
    const { steps, why } = buildTrace({
      flow: { ...flow(27673, 25998), netns: [host, { ...pod, key: WEB }] },
      record: record(27673),
      path: { ...path('reachable'), answeredBy: WEB },
      outcome: { kind: 'connected', rttMs: 0.2 },
      owners: new RuleOwners([{ id: WEB, network: 'psc-trx', ips: ['10.181.0.2'] }]),
      podName: (id) => (id === WEB ? 'trx/web' : undefined),
      target: { ...pod, key: WEB },
    });
    expect(steps.find((s) => s.decisive)).toMatchObject({
      verdict: 'DNAT',
      chain: 'CNI-DN-f0050dadfeda64aa67857',
      owner: { plugin: 'portmap', sandboxId: WEB },
    });
    expect(why).toBe(
      "answered in the pod's netns, after nat/CNI-DN-f0050dadfeda64aa67857 DNATed it to 10.181.0.2:8080 (a rule portmap installed for network psc-trx and pod trx/web)",
    );
    expect(steps.filter((s) => s.kind === 'netfilter' && s.table === 'raw' && s.chain === 'OUTPUT').length).toBe(1);
    expect(ruleVerdict({ what: 'rule', verdict: 'ACCEPT', rule: '-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE' })).toBe(
      'MASQUERADE',
    );
  });

  it("a foreign DNAT that sends the host port elsewhere decides the path: named, owned by nobody, the RST not the pod's", () => {
    const text = [
      'PACKET: 2 7a7a7a7a OUT=lo SRC=127.0.0.1 DST=127.0.0.1 LEN=60 TOS=0x0 TTL=64 ID=1 DF SPORT=23456 DPORT=25999 SYN',
      ' TRACE: 2 7a7a7a7a nat:OUTPUT:rule:0x9:ACCEPT  -4 -t nat -A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 25999 -m comment --comment fw-dnat -j DNAT --to-destination 127.0.0.1:26499',
      ' TRACE: 2 7a7a7a7a filter:OUTPUT:policy:ACCEPT',
    ].join('\n');
    const rec: FlowRecord = { ...record(23456), lines: new Map([['host', linesOfFlow(parseTraceOutput(text), 23456)]]) };
    const { steps, why } = buildTrace({
      flow: flow(23456, 25999),
      record: rec,
      path: path('refused'),
      outcome: { kind: 'refused' },
      owners: new RuleOwners([{ id: WEB, network: 'psc-trx', ips: ['10.181.0.2'] }]),
      podName: () => undefined,
      target: pod,
    });
    expect(steps.find((s) => s.decisive)).toMatchObject({ kind: 'netfilter', table: 'nat', chain: 'OUTPUT', verdict: 'DNAT', owner: null });
    expect(why).toBe(
      "sent elsewhere by nat/OUTPUT of the host: `-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 25999 -m comment --comment fw-dnat -j DNAT --to-destination 127.0.0.1:26499`, a rule no CNI plugin installed, DNATed it to 127.0.0.1:26499 instead of the pod's netns; refused there",
    );
    expect(steps.at(-1)).toMatchObject({ kind: 'deliver', netns: 'host' });
    expect(steps.at(-1)!.detail).toContain('a RST came back from 127.0.0.1:26499');
  });

  it('a route error decides an unreachable path, in the netns where the route is', () => {
    const { steps, why } = buildTrace({
      flow: { ...flow(21000, 4000), dst: '10.180.0.1', netns: [pod, host] },
      record: record(21000, [
        {
          netns: pod,
          purpose: 'route to 10.180.0.1',
          query: { dst: '10.180.0.1' },
          decision: {
            ok: false,
            error: 'Invalid argument',
            covering: { type: 'blackhole', dst: '10.180.0.1', text: 'blackhole 10.180.0.1' },
          },
        },
      ]),
      path: { ...path('unreachable'), kind: 'gateway' },
      outcome: { kind: 'unreachable', error: 'EINVAL' },
      owners: new RuleOwners([]),
      podName: () => undefined,
      target: host,
    });
    expect(steps[0]).toMatchObject({ kind: 'route', verdict: 'blackhole', decisive: true, netns: REJECTED });
    expect(why).toBe("route to 10.180.0.1 in the pod's netns is blackhole (blackhole 10.180.0.1)");
  });
});

describe('kernel drop reasons (skb:kfree_skb)', () => {
  it("reads the reason numbers from the event's format file and groups the recorded drops by family, location and reason", () => {
    const format =
      'print fmt: "… reason: %s", __print_symbolic(REC->reason, { 2, "NOT_SPECIFIED" }, { 3, "NO_SOCKET" }, { 16, "IP_RPFILTER" })';
    expect([...parseDropReasons(format)]).toEqual([
      ['NOT_SPECIFIED', 2],
      ['NO_SOCKET', 3],
      ['IP_RPFILTER', 16],
    ]);
    const trace = [
      '# tracer: nop',
      '  <idle>-0  [001] ..s2. 100.1: kfree_skb: skbaddr=00000000a rx_sk=0000000000000000 protocol=2048 location=ip_rcv_finish_core+0x1a/0x3c0 reason: IP_RPFILTER',
      '  <idle>-0  [001] ..s2. 101.1: kfree_skb: skbaddr=00000000b rx_sk=0000000000000000 protocol=2048 location=ip_rcv_finish_core+0x1a/0x3c0 reason: IP_RPFILTER',
      '  bash-9    [000] ..s1. 101.2: kfree_skb: skbaddr=00000000c rx_sk=0000000000000000 protocol=34525 location=tcp_v6_rcv+0x91/0x13f0 reason: NO_SOCKET',
      '  bash-9    [000] ..s1. 101.3: kfree_skb: skbaddr=00000000d rx_sk=0000000000000000 protocol=2054 location=arp_rcv+0x1/0x2 reason: OTHERHOST',
    ].join('\n');
    expect(parseKfreeSkb(trace)).toEqual([
      { family: 4, location: 'ip_rcv_finish_core+0x1a', reason: 'IP_RPFILTER', count: 2 },
      { family: 6, location: 'tcp_v6_rcv+0x91', reason: 'NO_SOCKET', count: 1 },
    ]);
    expect(isSocketReason('NO_SOCKET')).toBe(true);
    expect(isSocketReason('IP_RPFILTER')).toBe(false);
  });

  const host: TraceNetns = { key: 'host', label: 'the host' };
  const pod: TraceNetns = { key: WEB, path: '/run/netns/x', label: "the pod's netns" };
  const input = (drops: FlowRecord['drops']) => ({
    flow: { sport: 22222, family: 4 as const, dst: '127.0.0.1', dport: 25999, netns: [host, pod], routes: [] },
    record: { lines: new Map(), routes: [], missing: [], conntrack: [], ...(drops ? { drops } : {}) },
    path: {
      kind: 'hostPort' as const,
      from: 'host',
      to: '127.0.0.1:25999',
      proto: 'tcp',
      verdict: 'timeout' as const,
      measured: true,
      note: '',
    },
    outcome: { kind: 'timeout' as const },
    owners: new RuleOwners([]),
    podName: () => undefined,
    target: pod,
  });

  it('a kernel drop decides a timeout no rule explains; a socket reason is not a step of the path', () => {
    const { steps, why } = buildTrace(
      input([
        { family: 4, location: 'tcp_v4_rcv+0x91', reason: 'NO_SOCKET', count: 5 },
        { family: 4, location: 'ip_rcv_finish_core+0x1a', reason: 'IP_RPFILTER', count: 2 },
      ]),
    );
    expect(steps.filter((s) => s.kind === 'drop').map((s) => s.verdict)).toEqual(['IP_RPFILTER']);
    expect(steps.find((s) => s.decisive)).toMatchObject({ kind: 'drop', verdict: 'IP_RPFILTER', rule: 'ip_rcv_finish_core+0x1a' });
    expect(why).toBe('dropped by the kernel in ip_rcv_finish_core+0x1a: IP_RPFILTER (skb:kfree_skb), no netfilter rule dropped it');
  });

  it('without tracefs the trace says so in a drop step instead of staying silent', () => {
    const { steps } = buildTrace(input(undefined));
    expect(steps.find((s) => s.kind === 'drop')!.detail).toBe('drop reasons unavailable: tracefs (skb:kfree_skb) could not be used');
  });
});

describe('seen-at captures', () => {
  /** a legacy pcap (what tcpdump -w writes) of Ethernet frames carrying IPv4/TCP */
  const pcap = (frames: Array<{ sec: number; sport: number; dport: number; flags: number }>) => {
    const head = Buffer.alloc(24);
    head.writeUInt32LE(0xa1b2c3d4, 0);
    head.writeUInt16LE(2, 4);
    head.writeUInt16LE(4, 6);
    head.writeUInt32LE(128, 16);
    head.writeUInt32LE(1, 20);
    const recs = frames.map((f) => {
      const d = Buffer.alloc(14 + 20 + 20);
      d.writeUInt16BE(0x0800, 12);
      d[14] = 0x45;
      d[14 + 9] = 6;
      d.writeUInt16BE(f.sport, 34);
      d.writeUInt16BE(f.dport, 36);
      d[34 + 13] = f.flags;
      const h = Buffer.alloc(16);
      h.writeUInt32LE(f.sec, 0);
      h.writeUInt32LE(d.length, 8);
      h.writeUInt32LE(d.length, 12);
      return Buffer.concat([h, d]);
    });
    return Buffer.concat([head, ...recs]);
  };

  it('reads the TCP ports and flags of each captured frame, and writes one pcapng with an interface block per hop', () => {
    const a = parsePcap(pcap([{ sec: 2, sport: 23000, dport: 8080, flags: 0x02 }]));
    const b = parsePcap(
      pcap([
        { sec: 1, sport: 8080, dport: 23000, flags: 0x12 },
        { sec: 3, sport: 23000, dport: 8080, flags: 0x10 },
      ]),
    );
    expect(a.packets.map((p) => [p.sport, p.dport, p.flags])).toEqual([[23000, 8080, 'S']]);
    expect(b.packets.map((p) => p.flags)).toEqual(['S.', '.']);
    const out = writePcapng([
      { hop: { netns: 'host', interface: 'psc-x', label: 'bridge psc-x' }, ...a },
      { hop: { netns: WEB, interface: 'eth0', label: "eth0 in the pod's netns" }, ...b },
    ]);
    const { types, interfaces } = pcapngBlocks(out);
    // section header, two interfaces, three packets in time order
    expect(types).toEqual([0x0a0d0d0a, 1, 1, 6, 6, 6]);
    expect(interfaces).toEqual(['host/psc-x', `${WEB.slice(0, 12)}/eth0`]);
    // the first packet block is the earliest (interface 1, second 1)
    const firstEpb = out.indexOf(Buffer.from([6, 0, 0, 0]), 28);
    expect(out.readUInt32LE(firstEpb + 8)).toBe(1);
  });

  it('the hop where the packets stopped being seen decides a timeout no rule or kernel drop explains', () => {
    const host: TraceNetns = { key: 'host', label: 'the host' };
    const pod: TraceNetns = { key: WEB, path: '/run/netns/x', label: "the pod's netns" };
    const syn = { tsMicros: 1n, sport: 22222, dport: 8080, flags: 'S', data: Buffer.alloc(0), origLen: 74 };
    const { steps, why } = buildTrace({
      flow: { sport: 22222, family: 4, dst: '127.0.0.1', dport: 25999, netns: [host, pod], routes: [] },
      record: {
        lines: new Map(),
        routes: [],
        missing: [],
        conntrack: [],
        drops: [],
        seen: [
          { hop: { netns: 'host', interface: 'psc-x', label: 'bridge psc-x' }, out: [syn, syn], back: [] },
          { hop: { netns: 'host', interface: 'veth1', label: "host veth of the pod's netns" }, out: [], back: [] },
          { hop: { netns: WEB, interface: 'eth0', label: "eth0 in the pod's netns" }, out: [], back: [] },
        ],
      },
      path: { kind: 'hostPort', from: 'host', to: '127.0.0.1:25999', proto: 'tcp', verdict: 'timeout', measured: true, note: '' },
      outcome: { kind: 'timeout' },
      owners: new RuleOwners([]),
      podName: () => undefined,
      target: pod,
    });
    expect(steps.filter((s) => s.kind === 'seen').map((s) => [s.interface, s.seen])).toEqual([
      ['psc-x', true],
      ['veth1', false],
      ['eth0', false],
    ]);
    expect(steps.find((s) => s.decisive)).toMatchObject({ kind: 'seen', interface: 'veth1' });
    expect(why).toBe(
      "lost between bridge psc-x and host veth of the pod's netns: seen on the first, never on the second (outside netfilter: a qdisc, a down bridge port, a neighbour that did not answer)",
    );
  });
});
