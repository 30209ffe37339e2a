/**
 * Create a sandbox: a form over the CRI PodSandboxConfig with live validation (shared rules), a live preview of
 * what each plugin would receive, crictl import/export, and the run's steps as they happen.
 */
import { useEffect, useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { EGRESS_ANNOTATION, INGRESS_ANNOTATION } from '../../../../../shared/domain/bandwidth';
import { IP_PREFERENCES, type IpPreference } from '../../../../../shared/domain/config';
import { useClient } from '../../../lib/connection-context';
import { useDebounced } from '../../../lib/use-debounced';
import { useNavigation } from '../../../lib/navigation';
import { useEndpointCapabilities, useEndpointId } from '../../../lib/endpoint';
import { previewQuery, useRunSandbox } from '../api/queries';
import { exportCrictl } from '../model/crictl-io';
import { clashingSandboxId, emptyForm, fromConfig, newUid, toConfig, validateForm, type FormState } from '../model/form-state';
import { BandwidthField } from './BandwidthField';
import { Field } from './Field';
import { ImportDialog } from './ImportDialog';
import { KeyValueEditor } from './KeyValueEditor';
import { PortMappingsEditor } from './PortMappingsEditor';
import { PreviewPanel } from './PreviewPanel';
import { RunProgress } from './RunProgress';
import { useRunProgress } from './use-run-progress';
import { download } from '../../../lib/download';

/** Errors shown before the user touched anything would be noise; these appear only once touched or submitted. */
const REQUIRED_FIELDS = new Set(['name', 'namespace', 'uid']);

export function CreatePage() {
  const client = useClient();
  const endpointId = useEndpointId();
  const seed = useNavigation((s) => s.formSeed);
  const setView = useNavigation((s) => s.setView);
  const select = useNavigation((s) => s.select);
  const setDetailTab = useNavigation((s) => s.setDetailTab);
  const caps = useEndpointCapabilities();
  const [form, setForm] = useState<FormState>(() => (seed ? fromConfig(seed.config) : emptyForm()));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [notice, setNotice] = useState<{ title: string; warnings: string[] } | undefined>(
    seed ? { title: `Cloned from ${seed.source}: new uid, attempt 0`, warnings: [] } : undefined,
  );
  const [importOpen, setImportOpen] = useState(false);
  const [requestId, setRequestId] = useState<string>();
  const run = useRunSandbox(client, endpointId);
  const steps = useRunProgress(requestId);

  // A seed handed over while the form is open replaces it (adjusting state while rendering, as React recommends
  // over an effect); the store's copy is consumed after the render so it is applied once.
  const [seedNonce, setSeedNonce] = useState(seed?.nonce);
  if (seed && seed.nonce !== seedNonce) {
    setSeedNonce(seed.nonce);
    setForm(fromConfig(seed.config));
    setNotice({ title: `Cloned from ${seed.source}: new uid, attempt 0`, warnings: [] });
  }
  const consumeFormSeed = useNavigation((s) => s.consumeFormSeed);
  useEffect(() => {
    if (seed) consumeFormSeed();
  }, [seed, consumeFormSeed]);

  const set = <K extends keyof FormState>(k: K, v: FormState[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    setTouched((t) => (t.has(k) ? t : new Set(t).add(k)));
  };
  const errors = useMemo(() => validateForm(form), [form]);
  const visible = Object.fromEntries(Object.entries(errors).filter(([k]) => submitted || !REQUIRED_FIELDS.has(k) || touched.has(k)));
  const config = useMemo(() => toConfig(form), [form]);
  const ipPreference = form.ipPreference || undefined;
  const debounced = useDebounced(
    { config, ipPreference, ok: Object.keys(errors).filter((k) => !REQUIRED_FIELDS.has(k)).length === 0 },
    250,
  );
  const preview = useQuery(previewQuery(client, endpointId, debounced.config, debounced.ipPreference, caps.preview && debounced.ok));
  const crictlJson = useMemo(() => exportCrictl(config, 'json'), [config]);
  const crictlYaml = useMemo(() => exportCrictl(config, 'yaml'), [config]);
  const locked = run.isPending;

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    if (Object.keys(errors).length > 0) {
      // Nothing is sent: point at the first problem instead.
      // focus without the browser's own scroll (which leaves the field under the sticky bar), then centre it
      requestAnimationFrame(() => {
        const bad = document.querySelector<HTMLElement>('.create-form [aria-invalid="true"]');
        bad?.focus({ preventScroll: true });
        bad?.scrollIntoView?.({ block: 'center' });
      });
      return;
    }
    const id = globalThis.crypto.randomUUID();
    setRequestId(id);
    run.mutate({ config, ipPreference, requestId: id });
    requestAnimationFrame(() =>
      document.querySelector('[data-testid="run-progress"]')?.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' }),
    );
  };
  const reset = () => {
    setForm(emptyForm());
    setTouched(new Set());
    setSubmitted(false);
    setNotice(undefined);
    setRequestId(undefined);
    run.reset();
  };
  const errorCount = Object.keys(visible).length;
  const clashId = clashingSandboxId(run.error);

  return (
    <div className="create-page">
      <form className="create-form" onSubmit={submit} noValidate aria-label="Create sandbox">
        <div className="form-bar">
          <h2>New pod sandbox</h2>
          <span className="toolbar-spacer" />
          <button type="button" className="btn" onClick={() => setImportOpen(true)}>
            Import crictl…
          </button>
          <button type="button" className="btn" onClick={() => download(`${form.name || 'pod'}.json`, crictlJson, 'application/json')}>
            Export JSON
          </button>
          <button type="button" className="btn" onClick={() => download(`${form.name || 'pod'}.yaml`, crictlYaml, 'text/yaml')}>
            Export YAML
          </button>
          <button type="button" className="btn btn-ghost" onClick={reset}>
            Reset
          </button>
        </div>

        {notice && (
          // sticky under the form bar: an import is started from the bar wherever the form is scrolled, so its
          // warnings stay in view until dismissed
          <div className={`callout form-notice${notice.warnings.length ? ' callout-warn' : ''}`} data-testid="import-notice" role="status">
            <div className="callout-title">
              {notice.title}
              <button
                type="button"
                className="btn btn-ghost btn-small notice-close"
                aria-label="Dismiss"
                onClick={() => setNotice(undefined)}
              >
                ×
              </button>
            </div>
            {notice.warnings.length > 0 && (
              <ul className="warn-list">
                {notice.warnings.map((w) => (
                  <li key={w} className="mono">
                    {w}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}

        <fieldset className="form-section" disabled={locked}>
          <legend>Metadata</legend>
          <div className="form-grid">
            <Field label="Name" error={visible.name}>
              {(p) => (
                <input {...p} className="input mono" value={form.name} placeholder="web" onChange={(e) => set('name', e.target.value)} />
              )}
            </Field>
            <Field label="Namespace" error={visible.namespace}>
              {(p) => <input {...p} className="input mono" value={form.namespace} onChange={(e) => set('namespace', e.target.value)} />}
            </Field>
            <Field
              label="UID"
              error={visible.uid}
              hint={
                <button type="button" className="link" onClick={() => set('uid', newUid())}>
                  generate another
                </button>
              }
              wide
            >
              {(p) => <input {...p} className="input mono" value={form.uid} onChange={(e) => set('uid', e.target.value)} />}
            </Field>
            <Field label="Attempt" error={visible.attempt}>
              {(p) => (
                <input
                  {...p}
                  className="input mono"
                  inputMode="numeric"
                  value={form.attempt}
                  onChange={(e) => set('attempt', e.target.value)}
                />
              )}
            </Field>
          </div>
        </fieldset>

        <fieldset className="form-section" disabled={locked}>
          <legend>Network</legend>
          <div className="form-grid">
            <div className="field">
              <span className="label">Namespace mode</span>
              <div className="seg" role="radiogroup" aria-label="Network mode">
                {(['pod', 'host'] as const).map((m) => (
                  <label key={m} className={form.network === m ? 'seg-btn seg-on' : 'seg-btn'}>
                    <input
                      type="radio"
                      name="network"
                      className="offscreen"
                      checked={form.network === m}
                      onChange={() => set('network', m)}
                    />
                    {m === 'pod' ? 'Pod (CNI)' : 'Host'}
                  </label>
                ))}
              </div>
            </div>
            <Field label="Hostname" error={visible.hostname}>
              {(p) => (
                <input
                  {...p}
                  className="input mono"
                  value={form.hostname}
                  placeholder={form.name || 'pod name'}
                  onChange={(e) => set('hostname', e.target.value)}
                />
              )}
            </Field>
            <Field label="IP preference" hint="which eth0 address becomes the pod IP">
              {(p) => (
                <select
                  {...p}
                  className="input"
                  value={form.ipPreference}
                  onChange={(e) => set('ipPreference', e.target.value as IpPreference | '')}
                >
                  <option value="">engine default</option>
                  {IP_PREFERENCES.map((x) => (
                    <option key={x} value={x}>
                      {x}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Cgroup parent">
              {(p) => (
                <input
                  {...p}
                  className="input mono"
                  value={form.cgroupParent}
                  placeholder="(none)"
                  onChange={(e) => set('cgroupParent', e.target.value)}
                />
              )}
            </Field>
          </div>
        </fieldset>

        <fieldset className="form-section" disabled={locked || form.network === 'host'}>
          <legend>Port mappings {form.network === 'host' && <span className="muted small">— not used with host network</span>}</legend>
          <PortMappingsEditor rows={form.ports} errors={visible} onChange={(rows) => set('ports', rows)} />
        </fieldset>

        <fieldset className="form-section" disabled={locked || form.network === 'host'}>
          <legend>Bandwidth</legend>
          <div className="form-grid form-grid-2">
            <BandwidthField
              dir="ingress"
              annotation={INGRESS_ANNOTATION}
              value={form.ingress}
              error={visible.ingress}
              onChange={(v) => set('ingress', v)}
            />
            <BandwidthField
              dir="egress"
              annotation={EGRESS_ANNOTATION}
              value={form.egress}
              error={visible.egress}
              onChange={(v) => set('egress', v)}
            />
          </div>
          <div className="field-hint">
            Kubernetes quantities in bits per second, rounded up; allowed range 1k to 1P (containerd's limits).
          </div>
        </fieldset>

        <fieldset className="form-section" disabled={locked}>
          <legend>DNS</legend>
          <div className="form-grid form-grid-3">
            <Field label="Servers" error={visible.dnsServers}>
              {(p) => (
                <textarea
                  {...p}
                  className="input mono"
                  rows={2}
                  value={form.dnsServers}
                  placeholder="10.96.0.10"
                  onChange={(e) => set('dnsServers', e.target.value)}
                />
              )}
            </Field>
            <Field label="Searches">
              {(p) => (
                <textarea
                  {...p}
                  className="input mono"
                  rows={2}
                  value={form.dnsSearches}
                  placeholder="svc.cluster.local"
                  onChange={(e) => set('dnsSearches', e.target.value)}
                />
              )}
            </Field>
            <Field label="Options">
              {(p) => (
                <textarea
                  {...p}
                  className="input mono"
                  rows={2}
                  value={form.dnsOptions}
                  placeholder="ndots:5"
                  onChange={(e) => set('dnsOptions', e.target.value)}
                />
              )}
            </Field>
          </div>
        </fieldset>

        <fieldset className="form-section" disabled={locked}>
          <legend>Labels and annotations</legend>
          <div className="form-grid form-grid-2">
            <div>
              <div className="label">Labels</div>
              <KeyValueEditor
                name="labels"
                rows={form.labels}
                errors={visible}
                keyPlaceholder="app"
                onChange={(rows) => set('labels', rows)}
              />
            </div>
            <div>
              <div className="label">Annotations</div>
              <KeyValueEditor
                name="annotations"
                rows={form.annotations}
                errors={visible}
                keyPlaceholder="example.com/key"
                onChange={(rows) => set('annotations', rows)}
              />
            </div>
          </div>
        </fieldset>

        {visible.form && (
          <div className="callout callout-bad" role="alert">
            {visible.form}
          </div>
        )}

        <div className="form-submit">
          <button type="submit" className="btn btn-primary btn-large" disabled={locked}>
            {locked ? 'Creating…' : 'Create sandbox'}
          </button>
          {submitted && errorCount > 0 && (
            <span className="text-bad" role="alert" data-testid="form-error-summary">
              {errorCount} field{errorCount > 1 ? 's' : ''} need{errorCount > 1 ? '' : 's'} attention; nothing was created.
            </span>
          )}
          <span className="toolbar-spacer" />
          <span className="muted small">
            endpoint <span className="mono">{endpointId}</span>
          </span>
        </div>

        {requestId && (
          <RunProgress
            steps={steps}
            pending={run.isPending}
            error={run.error}
            createdId={run.data?.id}
            onOpen={() => {
              select(run.data?.id);
              setDetailTab('overview');
              setView('pods');
            }}
            onAnother={reset}
            clash={
              clashId
                ? {
                    existingId: clashId,
                    onOpenExisting: () => {
                      select(clashId);
                      setDetailTab('overview');
                      setView('pods');
                    },
                    onNewUid: () => {
                      set('uid', newUid());
                      setRequestId(undefined);
                      run.reset();
                      requestAnimationFrame(() => document.querySelector<HTMLElement>('.create-form button[type="submit"]')?.focus());
                    },
                  }
                : undefined
            }
          />
        )}
      </form>

      <PreviewPanel
        crictlJson={crictlJson}
        crictlYaml={crictlYaml}
        preview={preview.data}
        previewError={preview.error}
        fetching={preview.isFetching}
        available={caps.preview}
        localErrors={Object.keys(errors).filter((k) => !REQUIRED_FIELDS.has(k)).length}
      />

      <ImportDialog
        open={importOpen}
        onClose={() => setImportOpen(false)}
        onImport={(r) => {
          setForm(fromConfig(r.config));
          setTouched(new Set());
          setSubmitted(false);
          setNotice({
            title: r.warnings.length
              ? `Imported with ${r.warnings.length} warning${r.warnings.length > 1 ? 's' : ''}`
              : 'Imported crictl pod config',
            warnings: r.warnings,
          });
          setImportOpen(false);
        }}
      />
    </div>
  );
}
