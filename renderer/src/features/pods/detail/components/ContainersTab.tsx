/**
 * The pod's containers: a table (state, image, command, restarts, exit reason), and for the selected one its full
 * status, its log and a terminal. "Add container" and "Forward port" act on the pod. Exec, attach and forwards need
 * the endpoint's streaming; where it has none the screens say so instead of offering buttons that fail.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import type { ContainerSummary } from '../../../../../../shared/domain/container';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { queryKeys } from '../../../../lib/query-keys';
import { useClient } from '../../../../lib/connection-context';
import { useCurrentEndpoint, useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { age, shortId } from '../../../../lib/format';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { EmptyState } from '../../../../lib/ui/EmptyState';
import { Section } from '../../../../lib/ui/KeyValues';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { Segmented } from '../../../../lib/ui/Segmented';
import { containerStatusQuery, podContainersQuery } from '../api/containers';
import { ContainerDetails, commandLine } from './ContainerDetails';
import { AddContainer } from './AddContainer';
import { LogViewer } from './LogViewer';
// xterm.js is loaded when a terminal is first opened, not with the app
const ExecTerminal = lazy(() => import('./ExecTerminal').then((m) => ({ default: m.ExecTerminal })));
import { PortForwardPanel } from './PortForwardPanel';
import { ContainerStatePill, ExitCell } from './PodContainers';

type Pane = 'details' | 'logs' | 'terminal';

export function ContainersTab({ pod }: { pod: SandboxStatus }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const endpoint = useCurrentEndpoint();
  const list = useQuery(podContainersQuery(client, endpointId, pod.id, !caps.events));
  const [selected, setSelected] = useState<string>();
  const [pane, setPane] = useState<Pane>('details');
  const [adding, setAdding] = useState(false);
  const containers = list.data ?? [];
  const current = containers.find((c) => c.id === selected) ?? containers[0];
  const streaming = !!caps.streaming;
  const runtime =
    endpoint?.kind === 'cri' ? [endpoint.runtimeName, endpoint.runtimeVersion].filter(Boolean).join(' ') : 'the built-in engine';

  if (adding) return <AddContainer pod={pod} onDone={(id) => (setAdding(false), id && (setSelected(id), setPane('details')))} />;

  return (
    <div className="stack containers-tab">
      <div className="toolbar toolbar-plain">
        <span className="muted small">
          {containers.length} container{containers.length === 1 ? '' : 's'} in {pod.metadata.namespace}/{pod.metadata.name}
        </span>
        <span className="toolbar-spacer" />
        <button
          type="button"
          className="btn btn-primary"
          disabled={pod.state !== 'SANDBOX_READY'}
          onClick={() => setAdding(true)}
          title={pod.state !== 'SANDBOX_READY' ? 'the pod is not ready' : undefined}
        >
          Add container
        </button>
      </div>
      {list.isError ? (
        <ErrorView error={list.error} title="Could not list the containers" />
      ) : containers.length === 0 ? (
        <EmptyState title="No containers in this pod">
          {list.isLoading
            ? 'Loading…'
            : 'Add one: pick an image, a command and resources; the crictl container config is previewed as you type.'}
        </EmptyState>
      ) : (
        <table className="table containers-table" aria-label="Containers">
          <thead>
            <tr>
              <th>Name</th>
              <th>State</th>
              <th>Image</th>
              <th>Restarts</th>
              <th>Exit</th>
              <th>Age</th>
              <th>Id</th>
            </tr>
          </thead>
          <tbody>
            {containers.map((c) => (
              <tr
                key={c.id}
                data-container-name={c.metadata.name}
                className={c.id === current?.id ? 'row-selected' : undefined}
                aria-selected={c.id === current?.id}
                onClick={() => setSelected(c.id)}
              >
                <td>
                  <button type="button" className="link" onClick={() => setSelected(c.id)}>
                    {c.metadata.name}
                  </button>
                </td>
                <td>
                  <ContainerStatePill state={c.state} />
                </td>
                <td className="mono">{c.image}</td>
                <td className="mono">{c.metadata.attempt}</td>
                <ExitCell container={c} />
                <td className="mono">{age(c.createdAt)}</td>
                <td className="mono" title={c.id}>
                  {shortId(c.id)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Section title="Forward a port">
        {streaming ? (
          <PortForwardPanel podId={pod.id} />
        ) : (
          <p className="muted" role="note">
            This endpoint does not support port-forward ({runtime} offers no streaming here).
          </p>
        )}
      </Section>
      {current && (
        <ContainerPane
          key={current.id}
          container={current}
          pane={pane}
          setPane={setPane}
          streaming={streaming}
          runtime={runtime}
          onRemoved={() => setSelected(undefined)}
        />
      )}
    </div>
  );
}

function ContainerPane({
  container: c,
  pane,
  setPane,
  streaming,
  runtime,
  onRemoved,
}: {
  container: ContainerSummary;
  pane: Pane;
  setPane: (p: Pane) => void;
  streaming: boolean;
  runtime: string;
  onRemoved: () => void;
}) {
  const client = useClient();
  const endpointId = useEndpointId();
  const qc = useQueryClient();
  const status = useQuery(containerStatusQuery(client, endpointId, c.id));
  const refresh = () => qc.invalidateQueries({ queryKey: queryKeys.containers(endpointId) });
  const act = useMutation({
    mutationFn: async (verb: 'start' | 'stop' | 'remove') => {
      if (verb === 'start') await client.call('containers.start', { endpointId, id: c.id });
      else if (verb === 'stop') await client.call('containers.stop', { endpointId, id: c.id, timeoutSeconds: 10 });
      else await client.call('containers.remove', { endpointId, id: c.id });
      return verb;
    },
    onSettled: (verb) => {
      void refresh();
      if (verb === 'remove') onRemoved();
    },
  });
  const running = c.state === 'CONTAINER_RUNNING';
  return (
    <section className="container-pane" aria-label={`Container ${c.metadata.name}`}>
      <header className="container-pane-head">
        <h3>
          {c.metadata.name} <ContainerStatePill state={c.state} />
        </h3>
        <span className="mono small muted">{status.data ? commandLine(status.data) : ''}</span>
        <CopyButton text={c.id} label="Copy id" />
        <span className="toolbar-spacer" />
        <Segmented
          label="Container view"
          segments={[
            { id: 'details', label: 'Details' },
            { id: 'logs', label: 'Logs' },
            { id: 'terminal', label: 'Terminal' },
          ]}
          value={pane}
          onChange={setPane}
        />
        {c.state === 'CONTAINER_CREATED' && (
          <button type="button" className="btn" disabled={act.isPending} onClick={() => act.mutate('start')}>
            Start
          </button>
        )}
        {running && (
          <button type="button" className="btn" disabled={act.isPending} onClick={() => act.mutate('stop')}>
            Stop
          </button>
        )}
        <button type="button" className="btn btn-danger-outline" disabled={act.isPending} onClick={() => act.mutate('remove')}>
          Remove
        </button>
      </header>
      {act.isError && <ErrorView error={act.error} title="The action failed" />}
      {pane === 'details' &&
        (status.isError ? (
          <ErrorView error={status.error} title="Could not read the container status" />
        ) : status.data ? (
          <ContainerDetails s={status.data} />
        ) : (
          <div className="muted pad">Loading status…</div>
        ))}
      {pane === 'logs' && <LogViewer containerId={c.id} name={c.metadata.name} />}
      {pane === 'terminal' &&
        (!streaming ? (
          <EmptyState title="This endpoint does not support exec">
            {runtime} offers no streaming (exec, attach, port-forward) to Podscope here, so a terminal cannot be opened.
          </EmptyState>
        ) : !running ? (
          <EmptyState title="The container is not running">
            A terminal runs a process inside a running container; start it first.
          </EmptyState>
        ) : (
          <Suspense fallback={<div className="muted pad">Loading the terminal…</div>}>
            <ExecTerminal containerId={c.id} {...(status.data?.config.stdin && { attach: { tty: status.data.config.tty } })} />
          </Suspense>
        ))}
    </section>
  );
}
