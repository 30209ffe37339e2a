/**
 * Pods view: filters and bulk actions over the table, the selected pod's detail underneath (Wireshark-style).
 * With nothing open the list fills the view; with a pod open the list takes the height of its rows, up to the share of
 * the view set by dragging the split (remembered), and the detail gets the rest: one pod does not keep 40% empty.
 * Bulk actions act only on checked rows the filter shows. The list holds the pods of every node chosen in its Node
 * filter, each row naming its node; opening a pod makes the screens talk to its node. When a node cannot be reached its
 * last list stays, greyed, with its age, and is refreshed as soon as the node answers again.
 */
import { useEffect, useRef, useState } from 'react';
import { EmptyState } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { age } from '../../../lib/format';
import { PodDetail } from '../detail/components/PodDetail';
import { usePodsPage } from '../api/use-pods-page';
import { usePodsUi } from '../store';
import { usePodsLayout } from '../layout-store';
import { useEndpointSelection } from '../../../lib/endpoint';
import { BulkActions } from './BulkActions';
import { PodsTable } from './PodsTable';
import { PodsToolbar } from './PodsToolbar';
import { SplitHandle } from './SplitHandle';
import { NodeMatrix } from './NodeMatrix';
import { matrixNodes } from '../model/matrix';

export function PodsPage() {
  const { all, shown, selectedId, selected, select, setView, setDetailTab, stale, now, troubles, ...m } = usePodsPage();
  const openOn = useEndpointSelection((s) => s.openOn);
  // the reachability matrix of the listed nodes takes the detail's place; opening a pod closes it
  const [matrixOpen, setMatrixOpen] = useState(false);
  const canMatrix = m.manyNodes && matrixNodes(m.nodeIds, m.views).measured.length > 0;
  const showMatrix = matrixOpen && canMatrix;
  // a row of another listed node: the detail and its actions talk to that node
  const selectRow = (id: string) => {
    const node = m.nodeOf.get(id);
    if (node) openOn(node);
    setMatrixOpen(false);
    select(id);
  };
  const waiting = troubles.filter((t) => t.listedAt === undefined);
  const listShare = usePodsLayout((s) => s.listShare);
  const pageRef = useRef<HTMLDivElement>(null);
  const open = selected !== undefined || showMatrix;
  const pageClass = ['pods-page', open ? 'pods-page-split' : 'pods-page-full', stale ? 'pods-page-stale' : ''].filter(Boolean).join(' ');
  // the page's height, so the stored share becomes a cap in px for the list's own (content) height
  const [pageHeight, setPageHeight] = useState(0);
  useEffect(() => {
    const el = pageRef.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setPageHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const style = open ? ({ gridTemplateRows: 'auto 10px minmax(0, 1fr)' } as React.CSSProperties) : undefined;
  const topStyle = open && pageHeight > 0 ? ({ maxHeight: Math.round(listShare * pageHeight) } as React.CSSProperties) : undefined;

  return (
    <div className={pageClass} ref={pageRef} style={style}>
      <div className="pods-top" style={topStyle} data-testid="pods-top">
        <PodsToolbar
          pods={all}
          shown={shown.length}
          nodeIds={m.nodeIds}
          {...(canMatrix && {
            onMatrix: () => {
              select(undefined);
              setMatrixOpen(true);
            },
          })}
          actions={
            <BulkActions
              checkedShown={m.checkedShown}
              checkedHidden={m.checkedHidden}
              onCheck={m.setChecked}
              nodes={{ of: m.nodeOf, containers: m.byPod }}
            />
          }
        />
        {troubles.map((t) => (
          <div key={t.id} className="unreachable" role="alert" data-testid="pods-unreachable" data-node={t.label}>
            <strong>cannot reach {t.label}</strong>: {t.reason}
            <span className="muted small">
              {t.listedAt !== undefined
                ? ` · showing ${m.nodeIds.length > 1 ? 'its' : 'the'} list from ${age(new Date(t.listedAt).toISOString(), now)} ago, greyed`
                : ''}{' '}
              · retrying by itself
            </span>
          </div>
        ))}
        {all.length === 0 && waiting.length > 0 && waiting.length === m.nodeIds.length ? (
          waiting[0]!.error !== undefined ? (
            <div className="pad">
              <ErrorView error={waiting[0]!.error} title={`Could not list sandboxes on ${waiting[0]!.label}`} />
            </div>
          ) : (
            <div className="pad muted">Waiting for {waiting.map((t) => t.label).join(', ')}…</div>
          )
        ) : m.pending ? (
          <div className="pad muted">Loading sandboxes…</div>
        ) : all.length === 0 ? (
          <EmptyState
            title="No pod sandboxes yet"
            action={
              <button type="button" className="btn btn-primary" onClick={() => setView('create')}>
                Create a sandbox
              </button>
            }
          >
            A sandbox is a network namespace, the CNI plugins' work on it and a pause container. Create one to see every plugin call, the IP
            it got and why, its host ports and its bandwidth limits. You can also import a crictl pod config.
          </EmptyState>
        ) : shown.length === 0 ? (
          <EmptyState
            title="No sandbox matches these filters"
            action={
              <button type="button" className="btn" onClick={() => usePodsUi.getState().clearFilters()}>
                Clear filters
              </button>
            }
          />
        ) : (
          <div className={stale ? 'pods-stale' : 'pods-live'} data-testid="pods-list" data-stale={stale ? 'true' : 'false'}>
            <PodsTable
              pods={shown}
              selectedId={selectedId}
              onSelect={selectRow}
              onOpen={(id) => {
                selectRow(id);
                setDetailTab('overview');
              }}
              nodes={{ of: m.nodeOf, rows: m.rowNodes, column: m.manyNodes }}
              containerCounts={m.containerCounts}
              clashes={m.clashes}
              onShownRows={m.reportShownRows}
            />
          </div>
        )}
        {!open && all.length > 0 && shown.length > 0 && (
          /* with no detail below, this row ends the page: Tab from the list's checkboxes lands here, not on <body> */
          <div className="detail-hint muted small" data-testid="detail-hint">
            <span>Select a sandbox to see its namespace, network, CNI trace and lifecycle. ↑/↓ move through the list.</span>
            <span className="toolbar-spacer" />
            <button type="button" className="btn btn-small" onClick={() => setView('create')}>
              New sandbox
            </button>
          </div>
        )}
      </div>
      {open && <SplitHandle container={pageRef} />}
      {open && (
        <div className="pods-detail">
          {selected ? (
            <PodDetail summary={selected} containers={m.byPod.get(selected.id) ?? []} />
          ) : (
            <NodeMatrix
              nodeIds={m.nodeIds}
              views={m.views}
              readyNow={new Set(all.filter((p) => p.state === 'SANDBOX_READY').map((p) => p.id))}
              onClose={() => setMatrixOpen(false)}
            />
          )}
        </div>
      )}
    </div>
  );
}
