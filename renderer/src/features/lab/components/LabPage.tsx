/**
 * The CNI lab page: edit a conflist, pick capability args, Run it in a throwaway netns (trace live, then the result,
 * the kernel state created and the leak verdict), compare two runs (or a run and a live pod) plugin by plugin, and
 * Save into the conf dir after the warning. The local engine only: a CRI endpoint has no lab.
 */
import { useState } from 'react';
import { LOCAL_ENDPOINT_ID } from '../../../../../shared/domain/endpoints';
import { PodscopeError } from '../../../../../shared/domain/errors';
import type { LabRun } from '../../../../../shared/domain/lab';
import { useEndpointId } from '../../../lib/endpoint';
import { NotAvailable } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { Pill } from '../../../lib/ui/StatusPill';
import { useLab, type LabModel } from '../api/use-lab';
import { CapabilityArgs } from './CapabilityArgs';
import { ConflistEditor } from './ConflistEditor';
import { DiffView } from './DiffView';
import { LabPluginsTable } from './LabPluginsTable';
import { LabRuns } from './LabRuns';
import { LabSaveDialog } from './LabSaveDialog';
import { PluginTrace, RunView } from './RunView';

export function LabPage() {
  const endpointId = useEndpointId();
  if (endpointId !== LOCAL_ENDPOINT_ID)
    return (
      <div className="page">
        <NotAvailable what="The CNI lab (it runs plugins on this host, with the local engine)" />
      </div>
    );
  return <Lab endpointId={endpointId} />;
}

function ValidityHead({ lab }: { lab: LabModel }) {
  const v = lab.validation;
  return (
    <header className="page-head">
      <h2>CNI lab</h2>
      <span className="muted small">from {lab.source}</span>
      <span className="toolbar-spacer" />
      {v &&
        (v.ok ? (
          <Pill tone="ok">valid</Pill>
        ) : (
          <Pill tone="bad">
            {lab.issues.length} error{lab.issues.length === 1 ? '' : 's'}
          </Pill>
        ))}
      {v?.ok && (
        <span className="mono muted small">
          {v.name} · cniVersion {v.cniVersion} · CHECK {v.checkSupported ? 'runs' : 'skipped'}
        </span>
      )}
    </header>
  );
}

function RunState({ lab }: { lab: LabModel }) {
  const { run, live } = lab;
  return (
    <>
      {run.isPending && (
        <section className="section">
          <div className="section-head">
            <strong>Running…</strong>
            <span className="muted small">
              {live.plugins.length} plugin exec{live.plugins.length === 1 ? '' : 's'} so far
            </span>
          </div>
          <PluginTrace plugins={live.plugins} probe={live.probe} />
        </section>
      )}
      {run.error && (
        <ErrorView
          error={run.error}
          title={run.error instanceof PodscopeError && run.error.code === 'InvalidArgument' ? 'Refused: nothing was run' : 'Run failed'}
        />
      )}
      {lab.shownRun && <RunView run={lab.shownRun as LabRun} />}
    </>
  );
}

function Lab({ endpointId }: { endpointId: string }) {
  const lab = useLab(endpointId);
  const [confirmSave, setConfirmSave] = useState(false);
  const v = lab.validation;
  return (
    <div className="page stack" data-testid="lab-page">
      <ValidityHead lab={lab} />
      <div className="lab-top">
        <div className="stack-s">
          <ConflistEditor value={lab.text} onChange={lab.setText} issues={lab.issues} />
          <LabPluginsTable plugins={lab.plugins} />
          {v?.warnings.map((w) => (
            <div key={w} className="small muted">
              ⚠ {w}
            </div>
          ))}
        </div>
        <CapabilityArgs lab={lab} onSave={() => setConfirmSave(true)} />
      </div>
      <RunState lab={lab} />
      <LabRuns runs={lab.runs} pods={lab.pods} endpointPods={lab.endpointPods} {...lab.compare} onShow={lab.setShown} />
      {lab.diff.error && <ErrorView error={lab.diff.error} title="Cannot compare" />}
      {lab.diff.data && <DiffView diff={lab.diff.data} />}
      <LabSaveDialog
        open={confirmSave}
        networkName={v?.name}
        onSave={(fileName) => {
          setConfirmSave(false);
          lab.save.mutate(fileName);
        }}
        onClose={() => setConfirmSave(false)}
      />
    </div>
  );
}
