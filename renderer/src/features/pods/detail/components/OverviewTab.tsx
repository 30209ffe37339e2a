import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { dateTime } from '../../../../lib/format';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { KeyValues, LabelChips, Section } from '../../../../lib/ui/KeyValues';
import { Pill } from '../../../../lib/ui/StatusPill';
import { deserializeError } from '../../../../../../shared/domain/errors';
import { describePauseExit, describePendingEntry, whatStopReleases } from '../../../../../../shared/domain/sandbox-release';

/** Why the pod is NOTREADY, what is still held (pending cleanup), and what Stop will release. Plain text on purpose. */
export function NotReadySection({ s }: { s: SandboxStatus }) {
  const release = whatStopReleases(s);
  return (
    <Section title="Why NOTREADY">
      <div className={`callout ${s.cleanupPending?.length ? 'callout-bad' : 'callout-warn'}`} data-testid="not-ready-reason">
        {s.cleanupPending?.length
          ? 'Cleanup pending: a failed cleanup left the items below; the sandbox is kept until stop or remove releases them.'
          : s.pauseExit
            ? describePauseExit(s.pauseExit)
            : (s.notReadyReason ?? 'not ready')}
      </div>
      {s.cleanupPending?.length ? (
        <>
          <ul className="mono" data-testid="cleanup-pending">
            {s.cleanupPending.map((p, i) => (
              <li key={i}>{describePendingEntry(p)}</li>
            ))}
          </ul>
        </>
      ) : null}
      {release.length > 0 && (
        <>
          <p>Stop will release:</p>
          <ul className="mono" data-testid="stop-releases">
            {release.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
        </>
      )}
    </Section>
  );
}

export function OverviewTab({ s }: { s: SandboxStatus }) {
  const pauseTone = s.pause.status === 'running' ? 'ok' : s.pause.status === 'unknown' ? 'warn' : 'muted';
  return (
    <div className="cols">
      <div className="col">
        <Section title="Identity">
          <KeyValues
            rows={[
              ['id', s.id],
              ['name', s.name],
              ['metadata.name', s.metadata.name],
              ['metadata.namespace', s.metadata.namespace],
              ['metadata.uid', s.metadata.uid],
              ['metadata.attempt', String(s.metadata.attempt)],
              ['hostname', s.config.hostname],
              ['runtime handler', s.runtimeHandler || <span className="muted">default</span>],
              ['cgroup parent', s.config.linux?.cgroup_parent],
            ]}
          />
        </Section>
        <Section title="Times">
          <KeyValues
            rows={[
              ['created', `${dateTime(s.createdAt)}`],
              ['created_at (ns)', s.createdAtNs],
              ['stopped', s.stoppedAt ? dateTime(s.stoppedAt) : undefined],
            ]}
          />
        </Section>
      </div>
      <div className="col">
        {s.state !== 'SANDBOX_READY' && <NotReadySection s={s} />}
        <Section title="Namespace and pause container">
          <KeyValues
            rows={[
              [
                'state',
                <span key="st">
                  {s.state} <span className="muted">(internal: {s.internalState})</span>
                </span>,
              ],
              ['netns path', s.hostNetwork ? <span className="muted">host network: no pod netns</span> : s.netnsPath],
              ['netns', s.hostNetwork ? undefined : s.netnsClosed ? <Pill tone="muted">closed</Pill> : <Pill tone="ok">open</Pill>],
              ['pause container', s.pause.containerId],
              ['pause pid', s.pause.pid !== undefined ? String(s.pause.pid) : undefined],
              [
                'pause state',
                <Pill key="ps" tone={pauseTone}>
                  {s.pause.status}
                </Pill>,
              ],
              ['bundle', s.pause.bundle],
            ]}
          />
        </Section>
        <Section title="Labels">
          <LabelChips map={s.labels} />
        </Section>
        <Section title="Annotations">
          <LabelChips map={s.annotations} />
        </Section>
        {s.lastError && (
          <Section title="Last error">
            <ErrorView error={deserializeError(s.lastError)} />
          </Section>
        )}
      </div>
    </div>
  );
}
