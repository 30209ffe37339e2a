/**
 * A trace with a gap never names a cause the gap could hide. The events are the ones recorded when the host's
 * xtables-monitor overflowed (ENOBUFS) while an OUTPUT rule dropped the flow: no netfilter line of the flow, the SYN
 * seen on the bridge and nowhere after it. A complete trace of the same capture says "lost between … outside
 * netfilter"; a partial one must say first that netfilter was not traced, and label what it has as partial. And a
 * traced rule is placed as `iptables -L --line-numbers` counts it, not only by nft's handle, which iptables never shows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepLastLines, linesOfFlow, parseRulePositions, parseTraceOutput } from '../../electron/engine/kernel/netfilter-trace';
import type { FlowRecord, FlowSpec, TraceNetns } from '../../electron/engine/trace/flow-tracer';
import { RuleOwners } from '../../electron/engine/trace/ownership';
import { buildTrace, traceGaps } from '../../electron/engine/trace/steps';
import type { ProbePath } from '../../shared/domain/probe';

const WEB = 'e0587aec016495cd223f0d0b52e35badbf474bd46c1c465f6c2c62894b50d08f';
const REJECTED = '4cd108a4e74a369838a83ab0421707e090214721199e3cc8ac81d4cb9319411d';
const MONITOR = readFileSync(join(__dirname, 'fixtures/xtables-monitor-trace.txt'), 'utf8');
const ENOBUFS = 'netfilter: xtables-monitor in the host (IPv4): cannot receive from nfnetlink socket: No buffer space available';
const RESTARTED =
  'netfilter: xtables-monitor in the host (IPv4) ended 1 time(s) mid-trace and was started again; the events in between are lost (cannot receive from nfnetlink socket: No buffer space available)';

const host: TraceNetns = { key: 'host', label: 'the host' };
const pod: TraceNetns = { key: WEB, path: '/run/netns/x', label: "the pod's netns" };
const syn = { tsMicros: 1n, sport: 22222, dport: 8080, flags: 'S', data: Buffer.alloc(0), origLen: 74 };
const flow: FlowSpec = { sport: 22222, family: 4, dst: '127.0.0.1', dport: 25999, netns: [host, pod], routes: [] };
const lostOnBridge = (missing: string[]): FlowRecord => ({
  lines: new Map(),
  routes: [],
  missing,
  conntrack: [],
  drops: [],
  seen: [
    { hop: { netns: 'host', interface: 'psc-x', label: 'bridge psc-x' }, out: [syn, syn], back: [] },
    { hop: { netns: 'host', interface: 'veth1', label: "host veth of the pod's netns" }, out: [], back: [] },
    { hop: { netns: WEB, interface: 'eth0', label: "eth0 in the pod's netns" }, out: [], back: [] },
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
});
const common = { owners: new RuleOwners([]), podName: () => undefined, target: pod };

describe('a trace that could not see netfilter', () => {
  it('says so first and names no cause: no "lost between … outside netfilter" from a trace whose monitor overflowed', () => {
    const t = buildTrace({
      flow,
      record: lostOnBridge([ENOBUFS]),
      path: path('timeout'),
      outcome: { kind: 'timeout' },
      ...common,
      missing: [ENOBUFS],
    });
    expect(t.partial).toBe(true);
    expect(t.steps[0]).toMatchObject({ kind: 'gap', decisive: true });
    expect(t.steps[0]!.detail).toContain('No buffer space available');
    expect(t.steps.filter((s) => s.decisive)).toHaveLength(1);
    expect(t.why.startsWith(`partial trace: ${ENOBUFS}`)).toBe(true);
    expect(t.why).not.toMatch(/lost between|outside netfilter|no rule dropped/);
    // what was traced is still there, labelled
    expect(t.why).toContain("Traced (partial): seen on bridge psc-x, never on host veth of the pod's netns");
  });

  it('the same capture with every part traced still names the hop (the gap alone changes the verdict)', () => {
    const t = buildTrace({ flow, record: lostOnBridge([]), path: path('timeout'), outcome: { kind: 'timeout' }, ...common, missing: [] });
    expect(t.partial).toBeUndefined();
    expect(t.steps.some((s) => s.kind === 'gap')).toBe(false);
    expect(t.why).toMatch(/^lost between bridge psc-x and host veth/);
  });

  it('a monitor that restarted mid-trace is a gap too; a refused path then blames neither the pod nor "no rule"', () => {
    const t = buildTrace({
      flow,
      record: lostOnBridge([]),
      path: path('refused'),
      outcome: { kind: 'refused' },
      ...common,
      missing: [RESTARTED],
    });
    expect(t.partial).toBe(true);
    expect(t.steps.find((s) => s.decisive)!.kind).toBe('gap');
    expect(t.why).not.toMatch(/itself|no rule on the way/);
    expect(t.why).toContain('a RST came back');
  });

  it('a DROP or REJECT the kernel did trace still decides, with the gap named beside it', () => {
    const rec: FlowRecord = {
      lines: new Map([
        ['host', linesOfFlow(parseTraceOutput(MONITOR), 45555)],
        [REJECTED, []],
      ]),
      routes: [],
      missing: [],
      conntrack: [],
    };
    const t = buildTrace({
      flow: { ...flow, sport: 45555 },
      record: rec,
      path: path('refused'),
      outcome: { kind: 'refused' },
      ...common,
      missing: [ENOBUFS],
    });
    expect(t.partial).toBe(true);
    expect(t.steps.find((s) => s.decisive)).toMatchObject({ kind: 'netfilter', verdict: 'REJECT' });
    expect(t.why).toMatch(
      /^refused by a REJECT rule in filter\/OUTPUT of the host: .*\(partial trace: netfilter: xtables-monitor in the host/,
    );
  });

  it('only netfilter gaps make a trace partial (a missing conntrack or capture tool hides no rule)', () => {
    expect(traceGaps(['conntrack: not installed (no conntrack step)', 'seen-at: tcpdump is not installed', ENOBUFS])).toEqual([ENOBUFS]);
    expect(traceGaps(undefined)).toEqual([]);
  });
});

describe("a traced rule's place in its chain", () => {
  // `nft -a list table ip filter` in a netns with two OUTPUT rules and a user chain (iptables -L --line-numbers
  // numbers the OUTPUT rules 1 and 2, and MYCHAIN's rule 1)
  const LISTING = [
    'table ip filter { # handle 1',
    '\tchain OUTPUT { # handle 1',
    '\t\ttype filter hook output priority filter; policy accept;',
    '\t\tip daddr 10.9.9.9 tcp dport 80  counter packets 0 bytes 0 accept # handle 2',
    '\t\tip daddr 10.9.9.8 counter packets 0 bytes 0 drop # handle 2812',
    '\t}',
    '',
    '\tchain MYCHAIN { # handle 4',
    '\t\tcounter packets 0 bytes 0 return # handle 5',
    '\t}',
    '}',
  ].join('\n');

  it("counts each chain's rules by handle as iptables -L --line-numbers does (the chain lines and policy line are no rules)", () => {
    const p = parseRulePositions(LISTING);
    expect([...p.get('OUTPUT')!]).toEqual([
      [2, 1],
      [2812, 2],
    ]);
    expect([...p.get('MYCHAIN')!]).toEqual([[5, 1]]);
  });

  it('a step shows the line number first and the handle labelled; without the number, the handle says it is one', () => {
    const drop = 'TRACE: 2 aa000001 filter:OUTPUT:rule:0xafc:DROP  -4 -t filter -A OUTPUT -d 10.9.9.8/32 -j DROP';
    const lines = linesOfFlow(
      parseTraceOutput(`PACKET: 2 aa000001 OUT=lo SRC=127.0.0.1 DST=10.9.9.8 SPORT=22222 DPORT=80 SYN\n${drop}\n`),
      22222,
    );
    const at = (position?: number) => {
      const rec: FlowRecord = {
        lines: new Map([['host', lines.map((l) => (l.type === 'rule' && position !== undefined ? { ...l, position } : l))]]),
        routes: [],
        missing: [],
        conntrack: [],
      };
      return buildTrace({
        flow: { ...flow, dst: '10.9.9.8', netns: [host] },
        record: rec,
        path: path('timeout'),
        outcome: { kind: 'timeout' },
        ...common,
        target: host,
      }).steps.find((s) => s.kind === 'netfilter')!;
    };
    expect(at(2)).toMatchObject({ handle: 2812, position: 2, detail: 'filter/OUTPUT rule 2 (handle 2812): DROP' });
    expect(at(undefined).detail).toBe('filter/OUTPUT rule (handle 2812, its line number unread): DROP');
  });
});

describe("a monitor's stderr kept from its end", () => {
  it('is cut at a line start, so a torn line never reads as a message of its own', () => {
    const line = 'XT target DNAT not found\n';
    const text = line.repeat(100);
    const kept = keepLastLines(text, 2000);
    expect(kept.length).toBeLessThanOrEqual(2000);
    expect(
      kept
        .split('\n')
        .filter(Boolean)
        .every((l) => l === 'XT target DNAT not found'),
    ).toBe(true);
    expect(keepLastLines('short\n', 2000)).toBe('short\n');
    // one line longer than the window: its end, as before
    expect(keepLastLines('x'.repeat(3000), 2000)).toHaveLength(2000);
  });
});
