/**
 * "Add container"'s state and calls: the fields and which errors may show yet (live, like the pod form: a field's
 * error as soon as it is wrong, the required name and image once touched or on submit), the images the endpoint has
 * and a pull, the crictl preview, import, and CreateContainer + StartContainer.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { exportContainerConfig, importContainerConfig } from '../../../../../../shared/domain/crictl-container-format';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { useClient } from '../../../../lib/connection-context';
import { useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { queryKeys } from '../../../../lib/query-keys';
import { useImagePull } from '../../../../lib/use-image-pull';
import { emptyContainerForm, fromContainerConfig, toContainerConfig, type ContainerForm } from '../model/container-form';

/** empty at first is not a mistake yet: these say so once touched or submitted */
const REQUIRED_FIELDS = new Set(['name', 'image']);

/** the images this endpoint has, and whether the typed reference is one of them (short names as CRI resolves them) */
function useKnownImages(reference: string) {
  const client = useClient();
  const endpointId = useEndpointId();
  const caps = useEndpointCapabilities();
  const qc = useQueryClient();
  const images = useQuery({
    queryKey: queryKeys.images(endpointId),
    queryFn: () => client.call('images.list', { endpointId }),
    enabled: caps.images !== false,
  });
  const known = useMemo(() => new Set((images.data ?? []).flatMap((i) => [...i.repoTags, i.id])), [images.data]);
  const { pull, progress } = useImagePull(endpointId, () => void qc.invalidateQueries({ queryKey: queryKeys.images(endpointId) }));
  const image = reference.trim();
  const present =
    image !== '' &&
    (known.has(image) || [...known].some((t) => t.endsWith(`/${image}`) || t.endsWith(`/${image}:latest`) || t === `${image}:latest`));
  return { known, listed: images.data !== undefined, present, pull, progress };
}

export function useContainerForm(pod: SandboxStatus, onDone: (createdId?: string) => void) {
  const client = useClient();
  const endpointId = useEndpointId();
  const qc = useQueryClient();
  const [form, setForm] = useState<ContainerForm>(emptyContainerForm);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [notice, setNotice] = useState<string[]>();
  const set = <K extends keyof ContainerForm>(k: K, v: ContainerForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    setTouched((t) => (t.has(k) ? t : new Set(t).add(k)));
  };
  const images = useKnownImages(form.image);
  const { config, errors } = useMemo(() => toContainerConfig(form), [form]);
  const visible = Object.fromEntries(
    Object.entries(errors).filter(([k]) => submitted || !REQUIRED_FIELDS.has(k) || touched.has(k)),
  ) as Partial<Record<string, string>>;
  const errorCount = Object.keys(errors).length;

  const create = useMutation({
    mutationFn: () => client.call('containers.create', { endpointId, podSandboxId: pod.id, config }),
    onSuccess: (r) => {
      void qc.invalidateQueries({ queryKey: queryKeys.containers(endpointId) });
      onDone(r.id);
    },
  });
  const submit = () => {
    setSubmitted(true);
    if (errorCount === 0) create.mutate();
  };
  /** a crictl file into the form; its problems, or [] when imported */
  const importText = (text: string): string[] => {
    const r = importContainerConfig(text);
    if (!r.config) return r.errors;
    const { form: next, dropped } = fromContainerConfig(r.config);
    setForm(next);
    setTouched(new Set());
    setSubmitted(false);
    setNotice(dropped.length || r.warnings.length ? [...r.warnings, ...dropped] : undefined);
    return [];
  };
  const exportAs = (format: 'json' | 'yaml') => exportContainerConfig(config, format);

  return { form, set, visible, submitted, errorCount, config, images, create, submit, notice, importText, exportAs };
}

export type ContainerFormModel = ReturnType<typeof useContainerForm>;
