/**
 * The create form's state and calls: the fields and which errors may show yet, a seed handed over by "Clone into
 * form", the engine's preview of what each plugin would receive, the crictl export, and the run with its steps.
 * The page only lays these out.
 */
import { useEffect, useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../lib/endpoint';
import { useNavigation } from '../../../lib/navigation';
import { useDebounced } from '../../../lib/use-debounced';
import { exportCrictl, type ImportResult } from '../model/crictl-io';
import { clashingSandboxId, emptyForm, fromConfig, newUid, toConfig, validateForm, type FormState } from '../model/form-state';
import { previewQuery, useRunSandbox } from './queries';
import { useRunProgress } from './use-run-progress';

/** Errors shown before the user touched anything would be noise; these appear only once touched or submitted. */
const REQUIRED_FIELDS = new Set(['name', 'namespace', 'uid']);

export interface FormNotice {
  title: string;
  warnings: string[];
}

const clonedNotice = (source: string): FormNotice => ({ title: `Cloned from ${source}: new uid, attempt 0`, warnings: [] });

export type SetField = <K extends keyof FormState>(k: K, v: FormState[K]) => void;

/** the form as the user has it: fields, touched ones, a submit tried, the notice over it; a seed replaces it */
function useFormFields() {
  const seed = useNavigation((s) => s.formSeed);
  const consumeFormSeed = useNavigation((s) => s.consumeFormSeed);
  const [form, setForm] = useState<FormState>(() => (seed ? fromConfig(seed.config) : emptyForm()));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [notice, setNotice] = useState<FormNotice | undefined>(seed ? clonedNotice(seed.source) : undefined);
  // A seed handed over while the form is open replaces it (adjusting state while rendering, as React recommends
  // over an effect); the store's copy is consumed after the render so it is applied once.
  const [seedNonce, setSeedNonce] = useState(seed?.nonce);
  if (seed && seed.nonce !== seedNonce) {
    setSeedNonce(seed.nonce);
    setForm(fromConfig(seed.config));
    setNotice(clonedNotice(seed.source));
  }
  useEffect(() => {
    if (seed) consumeFormSeed();
  }, [seed, consumeFormSeed]);
  const set: SetField = (k, v) => {
    setForm((f) => ({ ...f, [k]: v }));
    setTouched((t) => (t.has(k) ? t : new Set(t).add(k)));
  };
  const replace = (next: FormState, nextNotice?: FormNotice) => {
    setForm(next);
    setTouched(new Set());
    setSubmitted(false);
    setNotice(nextNotice);
  };
  return { form, set, touched, submitted, setSubmitted, notice, setNotice, replace };
}

export function useCreateForm() {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const fields = useFormFields();
  const { form, touched, submitted } = fields;
  const [requestId, setRequestId] = useState<string>();
  const run = useRunSandbox(client, endpointId);
  const steps = useRunProgress(requestId);

  const errors = useMemo(() => validateForm(form), [form]);
  const visible = Object.fromEntries(Object.entries(errors).filter(([k]) => submitted || !REQUIRED_FIELDS.has(k) || touched.has(k)));
  /** errors the preview cannot do without (a missing name does not stop the engine from previewing) */
  const localErrors = Object.keys(errors).filter((k) => !REQUIRED_FIELDS.has(k)).length;
  const config = useMemo(() => toConfig(form), [form]);
  const ipPreference = form.ipPreference || undefined;
  const debounced = useDebounced({ config, ipPreference, ok: localErrors === 0 }, 250);
  const preview = useQuery(previewQuery(client, endpointId, debounced.config, debounced.ipPreference, caps.preview && debounced.ok));
  const crictlJson = useMemo(() => exportCrictl(config, 'json'), [config]);
  const crictlYaml = useMemo(() => exportCrictl(config, 'yaml'), [config]);

  /** false when nothing was sent (the first bad field is then pointed at) */
  const submit = (): boolean => {
    fields.setSubmitted(true);
    if (Object.keys(errors).length > 0) return false;
    const id = globalThis.crypto.randomUUID();
    setRequestId(id);
    run.mutate({ config, ipPreference, runtimeHandler: form.runtimeHandler || undefined, requestId: id });
    return true;
  };
  const reset = () => {
    fields.replace(emptyForm());
    setRequestId(undefined);
    run.reset();
  };
  const importConfig = (r: ImportResult & { config: NonNullable<ImportResult['config']> }) =>
    fields.replace(fromConfig(r.config), {
      title: r.warnings.length
        ? `Imported with ${r.warnings.length} warning${r.warnings.length > 1 ? 's' : ''}`
        : 'Imported crictl pod config',
      warnings: r.warnings,
    });
  /** after a name clash: the same form with a new uid, ready to submit again */
  const retryWithNewUid = () => {
    fields.set('uid', newUid());
    setRequestId(undefined);
    run.reset();
  };

  return {
    endpointId,
    previewAvailable: caps.preview,
    form,
    set: fields.set,
    notice: fields.notice,
    dismissNotice: () => fields.setNotice(undefined),
    errors,
    visible,
    submitted,
    localErrors,
    config,
    preview,
    crictlJson,
    crictlYaml,
    locked: run.isPending,
    run,
    steps,
    requestId,
    clashId: clashingSandboxId(run.error),
    submit,
    reset,
    importConfig,
    retryWithNewUid,
  };
}

export type CreateFormModel = ReturnType<typeof useCreateForm>;
