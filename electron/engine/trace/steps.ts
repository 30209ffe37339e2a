/**
 * A traced flow's record (netfilter lines per netns, route decisions, conntrack entries) turned into the path's
 * ordered steps — the way out netns by netns, then the way back — with the step that decided the verdict marked, and
 * one sentence saying why. Pure: everything read from the kernel comes in, nothing is read here.
 */
import type { ProbePath, RuleOwner, TraceStep } from '../../../shared/domain/probe';
import type { RouteDecision } from '../kernel/route-get';
import { TRACE_COMMENT_PREFIX, type TraceRuleLine } from '../kernel/netfilter-trace';
import type { ConnectOutcome } from '../netns/probe-net';
import { natOf } from './conntrack';
import { isSocketReason } from './drop-reasons';
import type { FlowRecord, FlowSpec, TraceNetns } from './flow-tracer';
import type { RuleOwners } from './ownership';

export interface TraceBuildInput {
  flow: FlowSpec;
  record: FlowRecord;
  /** the path as judged */
  path: ProbePath;
  outcome: ConnectOutcome;
  owners: RuleOwners;
  /** "namespace/name" of a sandbox this engine knows */
  podName(id: string): string | undefined;
  /** the netns whose answer means reachable (the expected one) */
  target: TraceNetns;
  /** what the trace of this flow lacked (the trace's and the flow's own), as the path's trace lists it */
  missing?: string[];
}

/**
 * The parts missing from a trace that could have decided a path it did not reach: netfilter not traced (the tools
 * are absent, or a monitor failed or lost events — its netlink socket overflowing with ENOBUFS under load). Without them a traced DROP is still a fact, but "no rule dropped it" is not, so nothing traced may be named as
 * the cause: a drop "between two hops, outside netfilter" may have been a rule the trace never saw.
 */
export function traceGaps(missing: readonly string[] | undefined): string[] {
  return (missing ?? []).filter((m) => m.startsWith('netfilter:'));
}

const TERMINAL_DROP = new Set(['DROP', 'REJECT', 'policy:DROP']);

/** the verdict as the rule meant it: the kernel reports a REJECT as DROP and a DNAT/SNAT/MASQUERADE as ACCEPT */
export function ruleVerdict(l: Pick<TraceRuleLine, 'what' | 'verdict' | 'rule'>): string {
  if (l.what === 'policy') return `policy:${l.verdict}`;
  const target = /-j (REJECT|DNAT|SNAT|MASQUERADE|REDIRECT)\b/.exec(l.rule ?? '')?.[1];
  if (target === 'REJECT' && l.verdict === 'DROP') return 'REJECT';
  if (target && target !== 'REJECT' && l.verdict === 'ACCEPT') return target;
  return l.verdict;
}

export function ownerPhrase(owner: RuleOwner | null | undefined, podName: (id: string) => string | undefined): string {
  if (!owner) return 'a rule no CNI plugin installed';
  const parts = [`a rule ${owner.plugin} installed`];
  if (owner.network) parts.push(`for network ${owner.network}`);
  if (owner.sandboxId) parts.push(`${owner.network ? 'and' : 'for'} pod ${podName(owner.sandboxId) ?? owner.sandboxId.slice(0, 12)}`);
  if (!owner.network && !owner.sandboxId) parts.push('(shared by every pod it maps)');
  return parts.join(' ');
}

function routeStep(r: FlowRecord['routes'][number], family: 4 | 6): TraceStep {
  const d: RouteDecision = r.decision;
  const step: TraceStep = { kind: 'route', netns: r.netns.key, family, detail: '' };
  if (r.reply) step.reply = true;
  if (d.ok) {
    step.verdict = d.type;
    step.rule = d.text;
    if (d.dev) step.interface = d.dev;
    step.detail = `${r.purpose}: ${d.text}${d.table && d.table !== 'main' ? ` (table ${d.table})` : ''}`;
  } else {
    step.verdict = d.covering && d.covering.type !== 'unicast' ? d.covering.type : 'error';
    if (d.covering) step.rule = d.covering.text;
    step.detail = `${r.purpose}: ${d.error}${d.covering ? ` (route ${d.covering.text})` : ''}`;
  }
  return step;
}

export function buildTrace(input: TraceBuildInput): { steps: TraceStep[]; why: string; partial?: true } {
  const { flow, record } = input;
  const label = new Map(flow.netns.map((n) => [n.key, n.label]));
  const labelOf = (key: string) => label.get(key) ?? key;
  const steps: TraceStep[] = [];
  // what could not be traced comes first: every step after it is read knowing it is part of the story
  const gaps = traceGaps(input.missing);
  for (const g of gaps)
    steps.push({
      kind: 'gap',
      netns: flow.netns[0]!.key,
      family: flow.family,
      detail: `not traced: ${g.replace(/^netfilter: /, 'netfilter — ')}; the rules the flow hit there are unknown`,
    });

  for (const n of flow.netns) {
    for (const r of record.routes.filter((x) => x.netns.key === n.key && !x.reply)) steps.push(routeStep(r, flow.family));
    steps.push(...netfilterSteps(input, n, false));
  }
  for (const n of [...flow.netns].reverse()) {
    for (const r of record.routes.filter((x) => x.netns.key === n.key && x.reply)) steps.push(routeStep(r, flow.family));
    steps.push(...netfilterSteps(input, n, true));
  }
  if (record.seen) steps.push(...seenSteps(record.seen, flow.family));
  steps.push(...conntrackSteps(flow, record.conntrack));
  steps.push(...dropSteps(input));
  const deliver = deliverStep(input, steps, (key) => label.has(key), labelOf);
  steps.push(deliver);

  const decided = decide(input, steps, deliver, labelOf);
  if (gaps.length === 0) {
    decided.decisive.decisive = true;
    return { steps, why: decided.why };
  }
  const { decisive, why } = partialVerdict(input, steps, decided, gaps);
  decisive.decisive = true;
  return { steps, why, partial: true };
}

/**
 * A trace with gaps: a DROP or REJECT the kernel traced still decides (it is what happened, the gap only hides what
 * else the flow passed); a path that answered is still what was measured; anything else is not explained: the gap
 * says so first, and what was traced follows, labelled partial, with no cause drawn from it.
 */
function partialVerdict(
  input: TraceBuildInput,
  steps: TraceStep[],
  decided: { decisive: TraceStep; why: string },
  gaps: string[],
): { decisive: TraceStep; why: string } {
  const first = steps.find((s) => s.kind === 'gap')!;
  const notTraced = `partial trace: ${gaps.join('; ')}`;
  const d = decided.decisive;
  const ruleDecided = d.kind === 'netfilter' && TERMINAL_DROP.has(d.verdict ?? '');
  if (ruleDecided || input.path.verdict === 'reachable' || input.path.verdict === 'shadowed')
    return { decisive: d, why: `${decided.why} (${notTraced})` };
  const lostAt = lostBetween(steps);
  const known = lostAt
    ? `seen on ${lostAt.seenOn}, never on ${lostAt.notOn}`
    : (steps
        .filter((s) => s.kind === 'seen' && s.seen)
        .map((s) => s.detail)
        .pop() ?? 'no hop capture of the flow');
  return {
    decisive: first,
    why: `${notTraced} — so no cause is named: a rule the trace did not see may have stopped it. Traced (partial): ${known}; ${
      input.outcome.kind === 'refused'
        ? 'a RST came back'
        : input.outcome.kind === 'timeout'
          ? 'nothing came back in time'
          : 'not connected'
    }`,
  };
}

/** the netfilter rules the flow passed in one netns, one direction, in the order the kernel traced them */
function netfilterSteps(input: TraceBuildInput, n: TraceNetns, reply: boolean): TraceStep[] {
  const { flow, record, owners } = input;
  const steps: TraceStep[] = [];
  const iface = new Map<string, string>();
  // every packet of the flow (SYN, ACK, data, FIN) passes the same rules: one step per rule and direction, counted
  const seen = new Map<string, { step: TraceStep; packets: Set<string> }>();
  for (const l of record.lines.get(n.key) ?? []) {
    if (l.type === 'packet') {
      const dev = l.fields.OUT || l.fields.IN;
      if (dev) iface.set(l.id, dev);
      continue;
    }
    if (l.reply !== reply) continue;
    // owners are resolved for every line (a jump names the owner of the chain it enters), our own TRACE rule is left out
    const owner = owners.ownerOf(l);
    if (l.marksTrace || l.rule?.includes(TRACE_COMMENT_PREFIX)) continue;
    const key = [l.table, l.chain, l.what, l.handle ?? '', l.verdict].join('/');
    const prev = seen.get(key);
    if (prev) {
      prev.packets.add(l.id);
      continue;
    }
    const step: TraceStep = {
      kind: 'netfilter',
      netns: n.key,
      family: flow.family,
      table: l.table,
      chain: l.chain,
      verdict: ruleVerdict(l),
      detail: '',
    };
    // a chain's policy is the kernel's default, not a rule anyone installed
    if (l.what === 'rule') step.owner = owner;
    if (l.rule) step.rule = l.rule;
    if (l.handle !== undefined) step.handle = l.handle;
    if (l.position !== undefined) step.position = l.position;
    const dev = iface.get(l.id);
    if (dev) step.interface = dev;
    if (reply) step.reply = true;
    step.detail =
      l.what === 'policy' ? `${l.table}/${l.chain}: policy ${l.verdict}` : `${l.table}/${l.chain} ${rulePlace(l)}: ${step.verdict}`;
    seen.set(key, { step, packets: new Set([l.id]) });
    steps.push(step);
  }
  for (const { step, packets } of seen.values()) if (packets.size > 1) step.detail += ` (${packets.size} packets)`;
  return steps;
}

/**
 * "rule 3 (handle 2812)": the number `iptables -L --line-numbers` shows first, nft's handle labelled beside it (the
 * handle alone matches nothing iptables prints)
 */
function rulePlace(l: Pick<TraceRuleLine, 'position' | 'handle'>): string {
  const handle = l.handle !== undefined ? `handle ${l.handle}` : '';
  if (l.position !== undefined) return `rule ${l.position}${handle ? ` (${handle})` : ''}`;
  return handle ? `rule (${handle}, its line number unread)` : 'rule';
}

/** seen-at: every hop of the path, the way out in path order, then (if anything came back) the way back in reverse */
function seenSteps(seen: NonNullable<FlowRecord['seen']>, family: 4 | 6): TraceStep[] {
  const seenStep = (h: NonNullable<FlowRecord['seen']>[number], reply: boolean): TraceStep => {
    const pk = reply ? h.back : h.out;
    const flags = [...new Set(pk.map((p) => p.flags || '?'))].join(' ');
    const step: TraceStep = {
      kind: 'seen',
      netns: h.hop.netns,
      family,
      interface: h.hop.interface,
      seen: pk.length > 0,
      detail: h.error
        ? `not captured on ${h.hop.label}: ${h.error}`
        : pk.length > 0
          ? `${pk.length} packet${pk.length === 1 ? '' : 's'} of the flow [${flags}] on ${h.hop.label}`
          : `no packet of the flow on ${h.hop.label}`,
    };
    if (reply) step.reply = true;
    return step;
  };
  const steps = seen.map((h) => seenStep(h, false));
  if (seen.some((h) => h.back.length > 0)) for (const h of [...seen].reverse()) steps.push(seenStep(h, true));
  return steps;
}

/** the flow's conntrack entries in every netns, or one step saying why there are none */
function conntrackSteps(flow: FlowSpec, conntrack: FlowRecord['conntrack']): TraceStep[] {
  if (!conntrack)
    return [{ kind: 'conntrack', netns: flow.netns[0]!.key, family: flow.family, detail: 'conntrack is not installed: no entry read' }];
  const steps: TraceStep[] = [];
  const found = conntrack.filter((c) => c.entries.length > 0);
  for (const c of found)
    for (const e of c.entries) {
      const nat = natOf(e);
      steps.push({
        kind: 'conntrack',
        netns: c.netns.key,
        family: flow.family,
        verdict: e.state ?? e.flags.join(','),
        rule: e.text,
        detail: `${e.state ?? 'entry'}${e.flags.length ? ` [${e.flags.join(', ')}]` : ''}${nat ? `; ${nat}` : '; no NAT'}`,
      });
    }
  if (found.length === 0)
    steps.push({
      kind: 'conntrack',
      netns: flow.netns[0]!.key,
      family: flow.family,
      detail: 'no conntrack entry for this flow (none was confirmed: it was stopped before leaving the first netns, or never sent)',
    });
  return steps;
}

/** drops: only for a flow that got no answer (a socket's own drops, e.g. a RST to a closed port, are not the path's) */
function dropSteps(input: TraceBuildInput): TraceStep[] {
  const { flow, record, outcome } = input;
  const lost = outcome.kind === 'timeout' || outcome.kind === 'error';
  if (!lost) return [];
  if (record.drops === undefined)
    return [
      {
        kind: 'drop',
        netns: input.target.key,
        family: flow.family,
        detail: 'drop reasons unavailable: tracefs (skb:kfree_skb) could not be used',
      },
    ];
  // most packets first: the flow's own SYN and its retransmits are usually the largest group
  return record.drops
    .filter((x) => !isSocketReason(x.reason))
    .sort((x, y) => y.count - x.count)
    .map((d) => ({
      kind: 'drop',
      netns: input.target.key,
      family: flow.family,
      verdict: d.reason,
      rule: d.location,
      detail: `the kernel freed ${d.count} IPv${d.family} packet${d.count === 1 ? '' : 's'} in ${d.location}: ${d.reason} (skb:kfree_skb while the trace ran; the event carries no address, so it may be another flow's)`,
    }));
}

/** how the connect ended and where: the last step of every trace */
function deliverStep(
  input: TraceBuildInput,
  steps: TraceStep[],
  onPath: (key: string) => boolean,
  labelOf: (key: string) => string,
): TraceStep {
  const { flow, path, outcome } = input;
  const rejectStep = steps.find((s) => s.kind === 'netfilter' && s.verdict === 'REJECT');
  const away = foreignDnat(steps, path);
  const deliver: TraceStep = { kind: 'deliver', netns: flow.netns[0]!.key, family: flow.family, detail: '' };
  switch (outcome.kind) {
    case 'connected':
      deliver.netns = path.answeredBy && onPath(path.answeredBy) ? path.answeredBy : input.target.key;
      deliver.detail = `connected (${path.rttMs ?? outcome.rttMs} ms); ${path.verdict === 'reachable' ? 'answered in' : 'answered, but not by the expected responder, in'} ${
        path.answeredBy ? (input.podName(path.answeredBy) ?? labelOf(deliver.netns)) : labelOf(deliver.netns)
      }`;
      break;
    case 'refused':
      deliver.netns = rejectStep?.netns ?? away?.step.netns ?? input.target.key;
      deliver.detail = rejectStep
        ? `a RST came back, sent by the REJECT rule in ${labelOf(rejectStep.netns)}`
        : away
          ? `a RST came back from ${away.to}, where a rule no CNI plugin installed DNATed it`
          : `a RST came back from ${labelOf(input.target.key)}`;
      break;
    case 'timeout':
      deliver.detail = 'nothing came back within the connect timeout';
      break;
    case 'unreachable':
      deliver.detail = `connect() failed at once with ${outcome.error}: no packet left ${labelOf(flow.netns[0]!.key)}`;
      break;
    case 'error':
      deliver.detail = `not connected: ${outcome.error}`;
      break;
  }
  return deliver;
}

/**
 * A DNAT on the way out that no plugin here installed, on a path that did not reach its pod: the flow was sent
 * somewhere else (an admin's or another runtime's rule matched before portmap's), so what answered, or did not, is
 * not the pod.
 */
function foreignDnat(steps: TraceStep[], path: ProbePath): { step: TraceStep; to: string } | undefined {
  if (path.verdict === 'reachable') return undefined;
  const step = steps.find((s) => s.kind === 'netfilter' && !s.reply && s.verdict === 'DNAT' && s.owner === null);
  if (!step) return undefined;
  return { step, to: /--to-destination (\S+)/.exec(step.rule ?? '')?.[1] ?? 'another address' };
}

/** the first hop (way out, then way back) that saw none of the flow's packets right after one that did */
function lostBetween(steps: TraceStep[]): { step: TraceStep; seenOn: string; notOn: string } | undefined {
  const label = (s: TraceStep) => s.detail.replace(/^.* on /, '');
  for (const reply of [false, true]) {
    const hops = steps.filter((s) => s.kind === 'seen' && !!s.reply === reply && !s.detail.startsWith('not captured'));
    // not even the first hop saw it: it never left the sending netns (a neighbour that did not answer, a route)
    if (!reply && hops[0] && !hops.some((h) => h.seen)) return { step: hops[0], seenOn: 'the sender', notOn: label(hops[0]) };
    for (let i = 1; i < hops.length; i++)
      if (hops[i - 1]!.seen && !hops[i]!.seen) return { step: hops[i]!, seenOn: label(hops[i - 1]!), notOn: label(hops[i]!) };
  }
  return undefined;
}

function routeWhy(s: TraceStep, dst: string, labelOf: (k: string) => string): string {
  const where = labelOf(s.netns);
  if (s.verdict && ['blackhole', 'unreachable', 'prohibit', 'throw'].includes(s.verdict))
    return `route to ${dst} in ${where} is ${s.verdict} (${s.rule ?? s.verdict})`;
  return `no route to ${dst} in ${where}: ${s.detail}`;
}

function decide(
  input: TraceBuildInput,
  steps: TraceStep[],
  deliver: TraceStep,
  labelOf: (k: string) => string,
): { decisive: TraceStep; why: string } {
  const { path, outcome, flow } = input;
  const failedRoute = steps.find(
    (s) => s.kind === 'route' && (s.verdict === 'error' || ['blackhole', 'unreachable', 'prohibit', 'throw'].includes(s.verdict ?? '')),
  );
  if (outcome.kind === 'unreachable' && failedRoute) return { decisive: failedRoute, why: routeWhy(failedRoute, flow.dst, labelOf) };
  const drop = steps.find((s) => s.kind === 'netfilter' && TERMINAL_DROP.has(s.verdict ?? ''));
  if (drop) {
    const where = `${drop.table}/${drop.chain} of ${labelOf(drop.netns)}`;
    const who = ownerPhrase(drop.owner, input.podName);
    const dir = drop.reply ? ' (on the way back)' : '';
    if (drop.verdict === 'policy:DROP') return { decisive: drop, why: `dropped${dir} by the DROP policy of ${where}` };
    if (drop.verdict === 'REJECT')
      return {
        decisive: drop,
        why: `${outcome.kind === 'refused' ? 'refused' : 'rejected'}${dir} by a REJECT rule in ${where}: \`${drop.rule}\`, ${who} — not by the pod`,
      };
    return { decisive: drop, why: `dropped${dir} in ${where} by \`${drop.rule}\`, ${who}` };
  }
  // measured beats derived: the hop where this flow's packets stopped being seen (captured for this flow only), else
  // a drop the kernel reported while the trace ran (not tied to the flow by address), decide before a route back
  // that looks wrong
  const kernelDrop = steps.find((s) => s.kind === 'drop' && s.verdict && s.verdict !== 'NETFILTER_DROP');
  const lostAt = lostBetween(steps);
  if (lostAt && path.verdict === 'timeout')
    return {
      decisive: lostAt.step,
      why: `lost${lostAt.step.reply ? ' on the way back' : ''} between ${lostAt.seenOn} and ${lostAt.notOn}: seen on the first, never on the second (outside netfilter: a qdisc, a down bridge port, a neighbour that did not answer)${
        kernelDrop ? `; meanwhile the kernel freed packets in ${kernelDrop.rule}: ${kernelDrop.verdict}` : ''
      }`,
    };
  if (kernelDrop && path.verdict === 'timeout')
    return {
      decisive: kernelDrop,
      why: `dropped by the kernel in ${kernelDrop.rule}: ${kernelDrop.verdict} (skb:kfree_skb), no netfilter rule dropped it`,
    };
  if (failedRoute && path.verdict !== 'reachable') return { decisive: failedRoute, why: routeWhy(failedRoute, flow.dst, labelOf) };
  const away = foreignDnat(steps, path);
  if (away) {
    const there =
      outcome.kind === 'refused'
        ? 'refused there'
        : outcome.kind === 'connected'
          ? 'something else answered there'
          : outcome.kind === 'timeout'
            ? 'nothing answered there in time'
            : `not connected: ${outcome.error}`;
    return {
      decisive: away.step,
      why: `sent elsewhere by ${away.step.table}/${away.step.chain} of ${labelOf(away.step.netns)}: \`${away.step.rule}\`, ${ownerPhrase(
        away.step.owner,
        input.podName,
      )}, DNATed it to ${away.to} instead of ${labelOf(input.target.key)}; ${there}`,
    };
  }
  const dnat = steps.find((s) => s.kind === 'netfilter' && s.verdict === 'DNAT' && !s.reply);
  const to = dnat ? /--to-destination (\S+)/.exec(dnat.rule ?? '')?.[1] : undefined;
  const viaDnat = dnat
    ? `, after ${dnat.table}/${dnat.chain} DNATed it to ${to ?? 'the pod'} (${ownerPhrase(dnat.owner, input.podName)})`
    : '';
  switch (path.verdict) {
    case 'reachable':
      return { decisive: dnat ?? deliver, why: `answered in ${labelOf(input.target.key)}${viaDnat}` };
    case 'shadowed':
      return {
        decisive: dnat ?? deliver,
        why: `landed in ${path.answeredBy ? (input.podName(path.answeredBy) ?? path.answeredBy.slice(0, 12)) : 'another listener'}${viaDnat}`,
      };
    case 'refused':
      return {
        decisive: deliver,
        why: `refused by ${labelOf(input.target.key)} itself: nothing listened on the port there and no rule on the way rejected it${viaDnat}`,
      };
    case 'unreachable':
      return { decisive: deliver, why: `connect() failed at once with a routing error in ${labelOf(flow.netns[0]!.key)}` };
    default: {
      const last = [...steps].reverse().find((s) => s.kind === 'netfilter' && !s.reply);
      const seen = last
        ? `the last the kernel traced of it was ${last.table}/${last.chain} in ${labelOf(last.netns)}${last.interface ? ` (${last.interface})` : ''}`
        : 'netfilter traced no packet of it';
      return { decisive: deliver, why: `no rule dropped it and nothing answered in time; ${seen}` };
    }
  }
}
