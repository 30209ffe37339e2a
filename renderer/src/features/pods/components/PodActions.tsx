/** Stop / remove (with confirmation), for one pod or a bulk selection. */
import { useState } from 'react';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import type { ContainerSummary } from '../../../../../shared/domain/container';
import { useClient } from '../../../lib/connection-context';
import { ConfirmDialog } from '../../../lib/ui/Dialog';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { usePodActions } from '../api/queries';
import { useContainersByPod } from '../api/containers';
import { useEndpointId } from '../../../lib/endpoint';

export function PodActions({
  pods,
  compact,
  onRemoved,
  nodes,
}: {
  pods: SandboxSummary[];
  compact?: boolean;
  onRemoved?: () => void;
  /** the pods of several nodes (the list's bulk actions): each pod's node, and every listed node's containers */
  nodes?: { of: Map<string, string>; containers: Map<string, ContainerSummary[]> };
}) {
  const client = useClient();
  const endpointId = useEndpointId();
  const { stop, remove } = usePodActions(client, endpointId, nodes?.of);
  const [confirm, setConfirm] = useState<'stop' | 'remove' | null>(null);
  const ids = pods.map((p) => p.id);
  const names = pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
  const what = pods.length === 1 ? names[0] : `${pods.length} sandboxes`;
  const anyReady = pods.some((p) => p.state === 'SANDBOX_READY');
  const anyPending = pods.some((p) => (p.cleanupPending?.length ?? 0) > 0);
  const ownByPod = useContainersByPod(client, endpointId);
  const byPod = nodes?.containers ?? ownByPod;
  // what a stop or remove kills besides the pause: said in the dialog, by name
  const running = pods.flatMap((p) =>
    (byPod.get(p.id) ?? [])
      .filter((c) => c.state === 'CONTAINER_RUNNING')
      .map((c) => `${pods.length > 1 ? `${p.metadata.name}/` : ''}${c.metadata.name}`),
  );
  const busy = stop.isPending || remove.isPending;
  const error = stop.error ?? remove.error;
  return (
    <>
      {/* NOTREADY pods too: a dead pause keeps its netns, IPs, DNAT and shaping until a stop releases them (containerd
          does the same), and a pending cleanup is retried by stop. Stop is idempotent, so it is never harmful. */}
      <button
        type="button"
        className="btn"
        disabled={!pods.length || busy}
        title={anyReady ? undefined : 'releases what a NOTREADY pod still holds (network, pending cleanup)'}
        onClick={() => (pods.length > 1 ? setConfirm('stop') : stop.mutate(ids))}
      >
        {stop.isPending ? 'Stopping…' : compact ? 'Stop' : `Stop${pods.length > 1 ? ` ${pods.length}` : ''}`}
      </button>
      <button type="button" className="btn btn-danger-outline" disabled={!pods.length || busy} onClick={() => setConfirm('remove')}>
        {remove.isPending ? 'Removing…' : compact ? 'Remove' : `Remove${pods.length > 1 ? ` ${pods.length}` : ''}`}
      </button>
      {error && (
        <div className="action-error">
          <ErrorView error={error} />
        </div>
      )}
      <ConfirmDialog
        open={confirm !== null}
        onClose={() => setConfirm(null)}
        title={confirm === 'remove' ? `Remove ${what}?` : `Stop ${what}?`}
        danger={confirm === 'remove'}
        confirmLabel={confirm === 'remove' ? 'Remove' : 'Stop'}
        body={
          <div className="confirm-body">
            {confirm === 'remove' ? (
              <p>
                {anyReady ? 'Ready sandboxes are stopped first (CNI DEL, pause container killed). ' : ''}
                {anyPending
                  ? 'Pending cleanup is retried first; if it still fails the sandbox is kept and the error says what is left. '
                  : ''}
                The network namespace, the CNI cache and the sandbox record are deleted. This cannot be undone.
              </p>
            ) : (
              <p>
                CNI DEL runs for every network (NOTREADY pods too: their IPs, host ports and shaping are released) and the pause container
                is killed. {anyPending ? 'Pending cleanup is retried. ' : ''}The record stays until removed.
              </p>
            )}
            <RunningContainers names={running} several={pods.length > 1} />
            {pods.length > 1 && (
              <ul className="confirm-list mono">
                {names.slice(0, 8).map((n) => (
                  <li key={n}>{n}</li>
                ))}
                {names.length > 8 && <li>… and {names.length - 8} more</li>}
              </ul>
            )}
          </div>
        }
        onConfirm={() => {
          const action = confirm;
          setConfirm(null);
          if (action === 'stop') stop.mutate(ids);
          if (action === 'remove') remove.mutate(ids, { onSuccess: () => onRemoved?.() });
        }}
      />
    </>
  );
}

/** the running containers a stop or remove will kill, named (the first few) and counted */
function RunningContainers({ names, several }: { names: string[]; several: boolean }) {
  if (names.length === 0) return <p data-testid="confirm-running">No container is running in {several ? 'them' : 'it'}.</p>;
  const shown = names.slice(0, 6);
  return (
    <p data-testid="confirm-running">
      <b>
        Kills {names.length} running container{names.length === 1 ? '' : 's'}:
      </b>{' '}
      <span className="mono">{shown.join(', ')}</span>
      {names.length > shown.length ? ` and ${names.length - shown.length} more` : ''}.
    </p>
  );
}
