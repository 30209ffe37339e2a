import { useMemo } from 'react';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { labelSelectorError, namespacesOf } from '../filter';
import { usePodsUi } from '../store';
import { NodeFilter } from './NodeFilter';

export function PodsToolbar({
  pods,
  shown,
  actions,
  nodeIds,
  onMatrix,
}: {
  pods: SandboxSummary[];
  shown: number;
  actions: React.ReactNode;
  /** the nodes listed (the Node filter) */
  nodeIds?: string[];
  /** opens the reachability matrix of the listed nodes (given when one of them can be measured from here) */
  onMatrix?: () => void;
}) {
  const filters = usePodsUi((s) => s.filters);
  const setFilter = usePodsUi((s) => s.setFilter);
  const clear = usePodsUi((s) => s.clearFilters);
  const active = filters.text || filters.namespace || filters.state || filters.label;
  const labelError = labelSelectorError(filters.label);
  // once per list change, not per keystroke (a 10k-pod list)
  const namespaces = useMemo(() => namespacesOf(pods), [pods]);
  return (
    <div className="toolbar">
      <input
        className="input input-search"
        type="search"
        placeholder="Filter by name, id, IP, label…"
        aria-label="Filter pods"
        value={filters.text}
        onChange={(e) => setFilter('text', e.target.value)}
      />
      {nodeIds && <NodeFilter nodeIds={nodeIds} />}
      {onMatrix && (
        <button type="button" className="btn btn-small" onClick={onMatrix} title="every pod × every pod of the listed nodes, measured">
          Matrix
        </button>
      )}
      <select className="input" aria-label="Namespace" value={filters.namespace} onChange={(e) => setFilter('namespace', e.target.value)}>
        <option value="">All namespaces</option>
        {namespaces.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <select
        className="input"
        aria-label="State"
        value={filters.state}
        onChange={(e) => setFilter('state', e.target.value as typeof filters.state)}
      >
        <option value="">Any state</option>
        <option value="SANDBOX_READY">Ready</option>
        <option value="SANDBOX_NOTREADY">NotReady</option>
      </select>
      <span className="label-filter">
        <input
          className={labelError ? 'input input-label input-bad' : 'input input-label'}
          placeholder="labels: app in (web,api), !tier"
          title="Kubernetes selector: env, !env, app=web, app!=web, app in (web,api), tier notin (x); join with ,"
          aria-label="Label selector"
          aria-invalid={labelError ? true : undefined}
          aria-describedby={labelError ? 'label-selector-error' : undefined}
          value={filters.label}
          onChange={(e) => setFilter('label', e.target.value)}
        />
        {labelError && (
          <span className="label-filter-error" id="label-selector-error" role="alert" data-testid="label-selector-error">
            {labelError}
          </span>
        )}
      </span>
      {active && (
        <button type="button" className="btn btn-ghost btn-small" onClick={clear}>
          Clear
        </button>
      )}
      <span className="toolbar-count">
        {shown === pods.length ? `${pods.length} sandbox${pods.length === 1 ? '' : 'es'}` : `${shown} of ${pods.length}`}
      </span>
      <span className="toolbar-spacer" />
      {actions}
    </div>
  );
}
