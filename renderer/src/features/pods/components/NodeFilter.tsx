/**
 * The pods list's Node filter: which nodes' pods the list holds, several at once, each kept live. Shown once more than
 * one node is added; the sidebar's choice lists that node alone, and this adds others beside it.
 */
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { endpointsQuery, useEndpointSelection } from '../../../lib/endpoint';

export function NodeFilter({ nodeIds }: { nodeIds: string[] }) {
  const client = useClient();
  const { data: endpoints } = useQuery(endpointsQuery(client));
  const setListed = useEndpointSelection((s) => s.setListed);
  if (!endpoints || endpoints.length < 2) return null;
  const names = endpoints.filter((e) => nodeIds.includes(e.id)).map((e) => e.label);
  const summary =
    nodeIds.length === endpoints.length ? 'All nodes' : names.length === 1 ? names[0] : `${names.length} of ${endpoints.length} nodes`;
  return (
    <details className="node-filter" data-testid="node-filter">
      <summary className="input node-filter-summary" title={names.join(', ')} aria-label={`Nodes listed: ${names.join(', ')}`}>
        Node: {summary}
      </summary>
      <fieldset className="node-filter-menu">
        <legend className="small muted">List the pods of</legend>
        {endpoints.map((e) => {
          const on = nodeIds.includes(e.id);
          return (
            <label key={e.id} className="node-filter-item" title={e.address ?? e.label}>
              <input
                type="checkbox"
                checked={on}
                // one node at least: an empty list would say nothing about any node
                disabled={on && nodeIds.length === 1}
                onChange={() => setListed(on ? nodeIds.filter((id) => id !== e.id) : [...nodeIds, e.id])}
              />
              <span className={e.connected === false ? 'text-bad' : undefined}>
                {e.label}
                {e.connected === false ? ' (lost)' : ''}
              </span>
            </label>
          );
        })}
      </fieldset>
    </details>
  );
}
