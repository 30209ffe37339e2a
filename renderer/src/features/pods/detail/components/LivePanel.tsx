/**
 * The frame every "what the kernel says now" section shares: one query per sandbox (the tabs share its cache),
 * a visible Refresh and the time the engine collected the view. No polling: the view is re-read when the pod
 * changes state or when the user asks.
 * - the endpoint cannot look into the kernel (CRI): say so, never fake it;
 * - no netns (host network, stopped): the engine's FailedPrecondition message, as a calm note;
 * - anything else that fails: the error box.
 */
import { useQuery } from '@tanstack/react-query';
import { PodscopeError } from '../../../../../../shared/domain/errors';
import type { LiveNetworkView } from '../../../../../../shared/domain/live';
import { useClient } from '../../../../lib/connection-context';
import { age } from '../../../../lib/format';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { useNow } from '../../../../lib/use-now';
import { useCurrentEndpoint, useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { podLiveQuery } from '../api/queries';

export function useLiveNetwork(id: string) {
  const client = useClient();
  const endpointId = useEndpointId();
  // wait for the endpoint's own answer: the local fallback would send a CRI endpoint a call it cannot serve
  const known = useCurrentEndpoint() !== undefined;
  const caps = useEndpointCapabilities();
  const available = caps.liveNetwork;
  const q = useQuery({ ...podLiveQuery(client, endpointId, id), enabled: known && available });
  return { known, available, q };
}

function time(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString(undefined, { hour12: false });
}

function CollectedAt({ iso }: { iso: string }) {
  const now = useNow(1000);
  return (
    <span className="live-when small muted" data-testid="live-collected-at" title={iso}>
      collected at <b className="mono">{time(iso)}</b> · {age(iso, now)} ago
    </span>
  );
}

export interface LivePanelProps {
  id: string;
  title: string;
  /** a short line under the title: what this section checks */
  subtitle?: React.ReactNode;
  testId: string;
  /** a stronger frame for the headline answer (bandwidth) */
  emphasis?: boolean;
  children: (view: LiveNetworkView) => React.ReactNode;
}

export function LivePanel({ id, title, subtitle, testId, emphasis, children }: LivePanelProps) {
  const { known, available, q } = useLiveNetwork(id);
  const runtime = useRuntimeLabel();
  const absent = q.error instanceof PodscopeError && q.error.code === 'FailedPrecondition' ? q.error.message : undefined;
  const state = !known ? 'loading' : !available ? 'unavailable' : absent ? 'absent' : q.isError ? 'error' : q.data ? 'ok' : 'loading';
  return (
    <section className={`live${emphasis ? ' live-emphasis' : ''}`} data-testid={testId} data-live-state={state} aria-label={title}>
      <header className="live-head">
        <span className="live-badge" aria-hidden>
          kernel
        </span>
        <h3>{title}</h3>
        <span className="toolbar-spacer" />
        {state === 'ok' && q.data && <CollectedAt iso={q.data.collectedAt} />}
        {known && available && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => void q.refetch()}
            disabled={q.isFetching}
            aria-label={`Refresh ${title}`}
          >
            {q.isFetching ? 'Reading…' : 'Refresh'}
          </button>
        )}
      </header>
      {subtitle && state !== 'unavailable' && <div className="live-sub small muted">{subtitle}</div>}
      {state === 'unavailable' ? (
        <div className="live-note" data-testid="live-unavailable">
          Not available from this runtime{runtime ? ` (${runtime})` : ''}: reading the pod's netns, tc qdiscs and nat rules needs Podscope's
          own engine on this host. Nothing is shown rather than a guess.
        </div>
      ) : state === 'absent' ? (
        <div className="live-note" data-testid="live-absent" role="status">
          <b>No network namespace to read.</b> {absent}
        </div>
      ) : state === 'error' ? (
        <ErrorView error={q.error} title="Could not read the live network state" />
      ) : state === 'loading' ? (
        <div className="live-note muted">Reading the kernel…</div>
      ) : (
        <>
          {q.data!.errors.length > 0 && (
            <div className="callout callout-warn small" data-testid="live-errors">
              <div className="callout-title">Part of the view could not be read</div>
              <ul className="warn-list">
                {q.data!.errors.map((e) => (
                  <li key={e} className="mono">
                    {e}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {children(q.data!)}
        </>
      )}
    </section>
  );
}

function useRuntimeLabel(): string | undefined {
  const endpoint = useCurrentEndpoint();
  if (endpoint?.kind !== 'cri') return undefined;
  return [endpoint.runtimeName, endpoint.runtimeVersion].filter(Boolean).join(' ') || endpoint.label;
}
