/**
 * The measured paths, one group per network the pod is attached to (its interface, plugin chain and link kind in the
 * group's heading), each row with its verdict, RTT, who answered and the note; an isolated path says which rule of its
 * plugin's design forbids it. Why?/Trace opens the path's trace under its row.
 */
import { Fragment } from 'react';
import { describeMtu, pathMeasuredBy, type ProbePath, type ProbeReport } from '../../../../../../shared/domain/probe';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { Pill } from '../../../../lib/ui/StatusPill';
import {
  COUNT_LABEL,
  hhmmss,
  KIND_LABEL,
  pathGroups,
  unmeasuredLabel,
  VERDICT_LABEL,
  verdictTone,
  type GroupCount,
  type PathGroup,
} from '../model/reachability';
import { PathTrace } from './PathTrace';

export interface PathActions {
  /** Why?/Trace buttons are offered (Podscope's own engine, on this host) */
  canExplain: boolean;
  open: number | null;
  tracing: boolean;
  busy: boolean;
  explain(index: number): void;
  /** the endpoint records plugin calls, so a rule's owner links to its pod's CNI trace */
  ownerTraces?: boolean;
}

export function ReachabilityPaths({ s, report, actions }: { s: SandboxStatus; report: ProbeReport; actions: PathActions }) {
  const ready = s.state === 'SANDBOX_READY';
  return (
    <table className="table" data-testid="reach-paths">
      <thead>
        <tr>
          <th>path</th>
          <th>from</th>
          <th>to</th>
          <th>verdict</th>
          <th>RTT</th>
          <th>answered by / note</th>
          <th />
        </tr>
      </thead>
      {pathGroups(report).map((g, gi) => (
        <tbody
          key={g.title ?? `group-${gi}`}
          data-testid={g.dns ? 'reach-dns' : 'reach-network'}
          data-network={g.network}
          data-interface={g.interface}
        >
          {g.title && <GroupHeading g={g} />}
          {g.dns?.resolvConf !== undefined && (
            <tr data-testid="reach-resolv-conf-row">
              <td colSpan={7}>
                <div className="small muted">the pod's /etc/resolv.conf</div>
                <pre className="mono small" data-testid="reach-resolv-conf">
                  {g.dns.resolvConf}
                </pre>
              </td>
            </tr>
          )}
          {g.rows.map(({ path, index }) => (
            <Fragment key={index}>
              <PathRow p={path} index={index} s={s} report={report} ready={ready} actions={actions} />
              {actions.open === index && !actions.tracing && (
                <tr data-testid="reach-trace-row">
                  <td colSpan={7}>
                    <PathTrace
                      ownerTraces={actions.ownerTraces ?? true}
                      path={path}
                      sandboxId={s.id}
                      nameOf={(id) => (id === s.id ? `${s.metadata.namespace}/${s.metadata.name}` : undefined)}
                    />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      ))}
    </table>
  );
}

function GroupHeading({ g }: { g: PathGroup }) {
  const summary = Object.entries(g.counts)
    .map(([v, n]) => `${n} ${COUNT_LABEL[v as GroupCount]}`)
    .join(' · ');
  return (
    <tr className="reach-group" data-testid="reach-network-heading">
      <th colSpan={7}>
        <span className="mono">{g.title}</span>
        {g.detail && <span className="muted small"> — {g.detail}</span>}
        {summary && <span className="muted small"> · {summary}</span>}
        {g.rows.length === 0 && (
          <span className="muted small">
            {g.dns ? ' · no nameserver: the pod resolves no name' : ' · no path: nothing maps to or routes over this network'}
          </span>
        )}
        {g.peersNote && (
          <span className="small" data-testid="reach-peers">
            {' '}
            · {g.peersNote}
          </span>
        )}
      </th>
    </tr>
  );
}

function PathRow({
  p,
  index,
  s,
  report,
  ready,
  actions,
}: {
  p: ProbePath;
  index: number;
  s: SandboxStatus;
  report: ProbeReport;
  ready: boolean;
  actions: PathActions;
}) {
  const open = actions.open === index;
  return (
    <tr data-kind={p.kind} data-verdict={p.verdict} data-measured={p.measured} data-interface={p.interface}>
      <td className="nowrap">
        {KIND_LABEL[p.kind]}
        {p.family ? <span className="muted small"> IPv{p.family}</span> : null}
        {p.declaredBy && (
          <div className="muted small" data-testid="reach-declared-by">
            declared by {p.declaredBy}
          </div>
        )}
      </td>
      <td className="mono nowrap">{p.from}</td>
      <td className="mono nowrap">
        {p.to}/{p.proto}
      </td>
      <td className="nowrap">
        <Pill
          tone={verdictTone(p, ready)}
          title={p.measured ? `measured at ${hhmmss(report.measuredAt)} by ${pathMeasuredBy(p)}` : unmeasuredLabel(p)}
        >
          {/* it connects, but full-size packets vanish: not "reachable" alone in red */}
          {p.verdict === 'reachable' && p.mtu?.blackHole ? 'connects · MTU black hole' : VERDICT_LABEL[p.verdict]}
        </Pill>
        {!p.measured && (
          <div className="small muted" data-testid="reach-derived">
            {unmeasuredLabel(p)}
          </div>
        )}
      </td>
      <td className="mono nowrap">{p.rttMs !== undefined ? `${p.rttMs.toFixed(2)} ms` : '—'}</td>
      <td className="small">
        {p.answeredBy && p.answeredBy !== s.id && (
          <div className="mono" data-testid="reach-answered-by">
            answered by {p.answeredBy.slice(0, 12)}
          </div>
        )}
        {p.listener && <span className="muted">{p.listener === 'existing' ? 'existing listener · ' : "probe's responder · "}</span>}
        <span className="muted">{p.note}</span>
        {p.mtu && (
          <div data-testid="reach-mtu" data-black-hole={p.mtu.blackHole} className={p.mtu.blackHole ? undefined : 'muted'}>
            {p.mtu.blackHole ? <b>{describeMtu(p.mtu)}</b> : describeMtu(p.mtu)}
          </div>
        )}
        {p.why && !p.trace && (
          <div data-testid="reach-design-rule">
            <b>{p.verdict === 'isolated' ? 'Expected: ' : 'Forbidden by design: '}</b>
            {p.why}
          </div>
        )}
      </td>
      <td className="nowrap">
        {p.measured && actions.canExplain && (
          <button
            type="button"
            className="btn btn-small"
            data-testid="reach-why"
            aria-expanded={open}
            onClick={() => actions.explain(index)}
            disabled={actions.busy && !open}
            title={
              p.verdict === 'reachable' ? 'Trace this path through the kernel' : 'Which rule or route stopped it, and who installed it'
            }
          >
            {actions.tracing && open ? 'Tracing…' : p.verdict === 'reachable' ? 'Trace' : 'Why?'}
          </button>
        )}
      </td>
    </tr>
  );
}
