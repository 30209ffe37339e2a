/**
 * The pod's containers at a glance on the Overview (state, image, exit code and reason), so nothing the engine holds
 * is invisible; the Containers tab has the rest (logs, terminal, forward port).
 */
import type { ContainerSummary } from '../../../../../../shared/domain/container';
import { shortId } from '../../../../lib/format';
import { Section } from '../../../../lib/ui/KeyValues';
import { Pill } from '../../../../lib/ui/StatusPill';

const TONE: Record<ContainerSummary['state'], 'ok' | 'warn' | 'muted' | 'bad'> = {
  CONTAINER_RUNNING: 'ok',
  CONTAINER_CREATED: 'warn',
  CONTAINER_EXITED: 'muted',
  CONTAINER_UNKNOWN: 'bad',
};

/** The runtime's state of a container (green only while it runs), here and in the Containers tab */
export function ContainerStatePill({ state }: { state: ContainerSummary['state'] }) {
  return <Pill tone={TONE[state]}>{state.replace('CONTAINER_', '').toLowerCase()}</Pill>;
}

export function exitText(c: ContainerSummary): string {
  if (c.state !== 'CONTAINER_EXITED') return '';
  return `exit ${c.exitCode}${c.reason ? ` · ${c.reason}` : ''}`;
}

/** The exit code and reason of an exited container, red unless it completed; a dash otherwise */
export function ExitCell({ container: c }: { container: ContainerSummary }) {
  const text = exitText(c);
  return <td className={c.reason === 'Completed' || !text ? 'mono' : 'mono text-bad'}>{text || <span className="muted">—</span>}</td>;
}

export function PodContainers({ containers }: { containers: ContainerSummary[] }) {
  return (
    <div className="overview-containers">
      <Section title={`Containers (${containers.length})`}>
        {containers.length === 0 ? (
          <span className="muted">No containers in this pod.</span>
        ) : (
          <table className="table" aria-label="Containers">
            <thead>
              <tr>
                <th>Name</th>
                <th>State</th>
                <th>Image</th>
                <th>Exit</th>
                <th>Id</th>
              </tr>
            </thead>
            <tbody>
              {containers.map((c) => (
                <tr key={c.id} data-container-name={c.metadata.name}>
                  <td>
                    {c.metadata.name}
                    {c.metadata.attempt > 0 && <span className="muted"> #{c.metadata.attempt}</span>}
                  </td>
                  <td>
                    <ContainerStatePill state={c.state} />
                  </td>
                  <td className="mono">{c.image}</td>
                  <ExitCell container={c} />
                  <td className="mono" title={c.id}>
                    {shortId(c.id)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </div>
  );
}
