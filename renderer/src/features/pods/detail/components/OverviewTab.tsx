import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { dateTime } from '../../../../lib/format';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { KeyValues, LabelChips, Section } from '../../../../lib/ui/KeyValues';
import { Pill } from '../../../../lib/ui/StatusPill';
import { deserializeError } from '../../../../../../shared/domain/errors';

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
        <Section title="Namespace and pause container">
          <KeyValues
            rows={[
              ['state', <span key="st">{s.state} <span className="muted">(internal: {s.internalState})</span></span>],
              ['netns path', s.hostNetwork ? <span className="muted">host network: no pod netns</span> : s.netnsPath],
              ['netns', s.hostNetwork ? undefined : s.netnsClosed ? <Pill tone="muted">closed</Pill> : <Pill tone="ok">open</Pill>],
              ['pause container', s.pause.containerId],
              ['pause pid', s.pause.pid !== undefined ? String(s.pause.pid) : undefined],
              ['pause state', <Pill key="ps" tone={pauseTone}>{s.pause.status}</Pill>],
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
