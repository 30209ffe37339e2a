/** What the bulk actions act on: the checked rows the filter shows; checked rows it hides are counted, never acted on. */
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import type { ContainerSummary } from '../../../../../shared/domain/container';
import { PodActions } from './PodActions';

export function BulkActions({
  checkedShown,
  checkedHidden,
  onCheck,
  nodes,
}: {
  nodes?: { of: Map<string, string>; containers: Map<string, ContainerSummary[]> };
  checkedShown: SandboxSummary[];
  checkedHidden: number;
  /** sets the checked rows */
  onCheck: (ids: string[]) => void;
}) {
  if (checkedShown.length === 0 && checkedHidden === 0) return false;
  return (
    <div className="bulk" data-testid="bulk">
      <span className="bulk-count">{checkedShown.length} selected</span>
      {checkedHidden > 0 && (
        <span className="bulk-hidden" data-testid="bulk-hidden" title="checked rows the filter hides are left out of bulk actions">
          {checkedHidden} hidden by the filter
          <button type="button" className="btn btn-ghost btn-small" onClick={() => onCheck(checkedShown.map((p) => p.id))}>
            Uncheck
          </button>
        </span>
      )}
      {checkedShown.length > 0 && <PodActions pods={checkedShown} onRemoved={() => onCheck([])} nodes={nodes} />}
    </div>
  );
}
