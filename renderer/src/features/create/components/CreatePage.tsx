/**
 * Create a sandbox: a form over the CRI PodSandboxConfig with live validation (shared rules), a live preview of
 * what each plugin would receive, crictl import/export, and the run's steps as they happen. The state and calls are
 * the model hook's (api/use-create-form); this lays them out.
 */
import { useState } from 'react';
import { download } from '../../../lib/download';
import { useNavigation } from '../../../lib/navigation';
import { scrollBehavior } from '../../../lib/motion';
import { useCreateForm, type CreateFormModel } from '../api/use-create-form';
import { logDirectoryOf } from '../model/form-state';
import { DnsSection, LabelsSection } from './DnsAndLabelsSections';
import { FormBar, NoticeCallout, SubmitRow } from './FormChrome';
import { ImportDialog } from './ImportDialog';
import { LogsSection, MetadataSection } from './MetadataSections';
import { NetworkSection, PortsAndBandwidthSections } from './NetworkSections';
import { PreviewPanel } from './PreviewPanel';
import { RunProgress } from './RunProgress';

/** focus without the browser's own scroll (which leaves the field under the sticky bar), then centre it */
function focusFirstInvalid() {
  requestAnimationFrame(() => {
    const bad = document.querySelector<HTMLElement>('.create-form [aria-invalid="true"]');
    bad?.focus({ preventScroll: true });
    bad?.scrollIntoView?.({ block: 'center' });
  });
}

function Progress({ m }: { m: CreateFormModel }) {
  const openPod = useNavigation((s) => s.openPod);
  const { run, clashId } = m;
  if (!m.requestId) return null;
  return (
    <RunProgress
      steps={m.steps}
      pending={run.isPending}
      error={run.error}
      createdId={run.data?.id}
      onOpen={() => run.data && openPod(run.data.id, 'overview')}
      onAnother={m.reset}
      clash={
        clashId
          ? {
              existingId: clashId,
              onOpenExisting: () => openPod(clashId, 'overview'),
              onNewUid: () => {
                m.retryWithNewUid();
                requestAnimationFrame(() => document.querySelector<HTMLElement>('.create-form button[type="submit"]')?.focus());
              },
            }
          : undefined
      }
    />
  );
}

export function CreatePage() {
  const m = useCreateForm();
  const [importOpen, setImportOpen] = useState(false);
  const { form, set, visible, locked } = m;
  const section = { form, set, errors: visible, locked };
  const fileName = form.name || 'pod';
  return (
    <div className="create-page">
      <form
        className="create-form"
        noValidate
        aria-label="Create sandbox"
        onSubmit={(e) => {
          e.preventDefault();
          // nothing is sent when a field is wrong: point at the first problem instead
          if (!m.submit()) return focusFirstInvalid();
          requestAnimationFrame(() =>
            document.querySelector('[data-testid="run-progress"]')?.scrollIntoView?.({ block: 'nearest', behavior: scrollBehavior() }),
          );
        }}
      >
        <FormBar
          onImport={() => setImportOpen(true)}
          onExportJson={() => download(`${fileName}.json`, m.crictlJson, 'application/json')}
          onExportYaml={() => download(`${fileName}.yaml`, m.crictlYaml, 'text/yaml')}
          onReset={m.reset}
        />
        {m.notice && <NoticeCallout notice={m.notice} onDismiss={m.dismissNotice} />}
        <MetadataSection {...section} />
        <LogsSection {...section} />
        <NetworkSection {...section} />
        <PortsAndBandwidthSections {...section} />
        <DnsSection {...section} />
        <LabelsSection {...section} />
        {visible.form && (
          <div className="callout callout-bad" role="alert">
            {visible.form}
          </div>
        )}
        <SubmitRow locked={locked} errorCount={m.submitted ? Object.keys(visible).length : 0} endpointId={m.endpointId} />
        <Progress m={m} />
      </form>
      <PreviewPanel
        crictlJson={m.crictlJson}
        crictlYaml={m.crictlYaml}
        preview={m.preview.data}
        previewError={m.preview.error}
        fetching={m.preview.isFetching}
        available={m.previewAvailable}
        localErrors={m.localErrors}
        logDirectory={logDirectoryOf(form)}
      />
      <ImportDialog
        open={importOpen}
        onClose={() => setImportOpen(false)}
        onImport={(r) => {
          m.importConfig(r);
          setImportOpen(false);
        }}
      />
    </div>
  );
}
