/**
 * A planned connect's outcome turned into a verdict. Only an answer carrying this probe's nonce and the expected
 * sandbox's id is "reachable"; another sandbox's answer is "shadowed" by it (named); a listener of the pod's own sends no
 * banner, so the DNAT chain order names who got the connection then. On a path the plugin's design forbids, no answer
 * is `isolated` (with the rule as `why`); an answer is reported as measured, with a note that the design forbids it.
 */
import type { ProbePath } from '../../../shared/domain/probe';
import type { PodFacts } from '../common/pod-facts';
import type { PlannedConnect } from './plan';
import { PROBE_BANNER } from './session';
import { unreachableNote, type ConnectOutcome } from '../netns/probe-net';

export const podName = (rec: PodFacts | undefined) => (rec ? `${rec.config.metadata.namespace}/${rec.config.metadata.name}` : undefined);

export function judge(
  p: PlannedConnect,
  outcome: ConnectOutcome,
  nonce: string,
  others: PodFacts[],
  dnatWinner: string | undefined,
): ProbePath {
  const measured = judgeOutcome(p, outcome, nonce, others, dnatWinner);
  if (!p.forbidden) return measured;
  if (outcome.kind === 'timeout' || outcome.kind === 'unreachable' || outcome.kind === 'error')
    return { ...measured, verdict: 'isolated', why: p.forbidden, note: `${measured.note}: as the plugin's design says` };
  // something answered although the design forbids it: what was measured stands, and the note says so
  return {
    ...measured,
    why: p.forbidden,
    note: `${measured.note}; unexpected: the plugin's design forbids this path, yet the packet arrived`,
  };
}

function judgeOutcome(
  p: PlannedConnect,
  outcome: ConnectOutcome,
  nonce: string,
  others: PodFacts[],
  dnatWinner: string | undefined,
): ProbePath {
  const path: ProbePath = { ...p.path, measured: true, listener: p.expect === 'host' ? undefined : p.existing ? 'existing' : 'responder' };
  if (path.listener === undefined) delete path.listener;
  switch (outcome.kind) {
    case 'refused':
      return { ...path, verdict: 'refused', note: 'connection refused (RST)' };
    case 'timeout':
      return { ...path, verdict: 'timeout', note: 'no answer to the SYN in time' };
    case 'unreachable':
      return { ...path, verdict: 'unreachable', note: unreachableNote(outcome.error) };
    case 'error':
      return { ...path, verdict: 'timeout', note: `not connected: ${outcome.error}` };
    case 'connected':
      return judgeConnected(p, path, outcome, nonce, others, dnatWinner);
  }
}

function judgeConnected(
  p: PlannedConnect,
  path: ProbePath,
  outcome: Extract<ConnectOutcome, { kind: 'connected' }>,
  nonce: string,
  others: PodFacts[],
  dnatWinner: string | undefined,
): ProbePath {
  path.rttMs = Math.round(outcome.rttMs * 1000) / 1000;
  const nameOf = (id: string) => podName(others.find((o) => o.id === id)) ?? id;
  const m = outcome.banner ? new RegExp(`^${PROBE_BANNER} ([0-9a-f]+) (\\S+)$`).exec(outcome.banner.trim()) : null;
  if (m && m[1] === nonce) {
    const who = m[2]!;
    if (who === p.expect)
      return {
        ...path,
        verdict: 'reachable',
        answeredBy: who === 'host' ? undefined : who,
        note: p.existing ? 'the listener answered' : 'nonce matched',
      };
    return {
      ...path,
      verdict: 'shadowed',
      answeredBy: who,
      note: `the connection landed in sandbox ${nameOf(who)} (${who.slice(0, 12)}): its DNAT rule matches first`,
    };
  }
  if (p.existing) {
    if (dnatWinner && dnatWinner !== p.expect)
      return {
        ...path,
        verdict: 'shadowed',
        answeredBy: dnatWinner,
        note: `connected, but sandbox ${nameOf(dnatWinner)}'s DNAT rule comes first in CNI-HOSTPORT-DNAT`,
      };
    return {
      ...path,
      verdict: 'reachable',
      answeredBy: p.expect,
      note: 'connected to the listener already in the pod (not identified by a nonce)',
    };
  }
  return {
    ...path,
    verdict: 'shadowed',
    note: `connected, but not to this probe's responder${outcome.banner ? ` (answer: ${JSON.stringify(outcome.banner.slice(0, 80))})` : ''}`,
  };
}
