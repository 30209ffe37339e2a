/**
 * The lab page's state and calls: the conflist text and its validation, the capability args, a run followed by its
 * progress events, the runs kept and the pair compared, and Save. The page only lays these out.
 */
import { useEffect, useMemo, useState } from 'react';
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import type { LabIssue, LabPluginTrace, LabProbe } from '../../../../../shared/domain/lab';
import { useClient } from '../../../lib/connection-context';
import { endpointsQuery } from '../../../lib/endpoint';
import { useNavigation } from '../../../lib/navigation';
import { queryKeys } from '../../../lib/query-keys';
import { STARTER_CONFLIST } from '../../../lib/starter-conflist';
import { useDebounced } from '../../../lib/use-debounced';
import { capabilitiesFrom, EMPTY_CAPS_FORM, type CapsForm } from '../model/capabilities';
import { labDiffQuery, labRunQuery, labRunsQuery, labValidateQuery } from './queries';

/** the plugin execs (and the probe) of one run as its progress events arrive */
export function useLabProgress(requestId: string | undefined): { plugins: LabPluginTrace[]; probe?: LabProbe } {
  const client = useClient();
  const [state, setState] = useState<{ requestId?: string; plugins: LabPluginTrace[]; probe?: LabProbe }>({ plugins: [] });
  useEffect(() => {
    if (!requestId) return;
    return client.onEvent((e) => {
      if (e.kind !== 'lab.progress' || e.progress.requestId !== requestId) return;
      const { plugin: p, probe } = e.progress;
      if (p) setState((s) => (s.requestId === requestId ? { ...s, plugins: [...s.plugins, p] } : { requestId, plugins: [p] }));
      if (probe) setState((s) => (s.requestId === requestId ? { ...s, probe } : { requestId, plugins: [], probe }));
    });
  }, [client, requestId]);
  return requestId !== undefined && state.requestId === requestId ? state : { plugins: [] };
}

/** the conflist being edited: the one handed over by "Open in lab"/"New" (read once, then dropped) or the starter */
function useConflistText() {
  const seed = useNavigation((s) => s.labSeed);
  const consumeLabSeed = useNavigation((s) => s.consumeLabSeed);
  const [text, setText] = useState(seed?.text ?? STARTER_CONFLIST);
  const [source] = useState(seed?.source ?? 'starter');
  useEffect(() => {
    if (seed) consumeLabSeed();
  }, [seed, consumeLabSeed]);
  return { text, setText, source };
}

export function useLab(endpointId: string) {
  const client = useClient();
  const qc = useQueryClient();
  const { text, setText, source } = useConflistText();
  const [capsForm, setCapsForm] = useState<CapsForm>(EMPTY_CAPS_FORM);
  const [force, setForce] = useState(false);
  const [probe, setProbe] = useState(false);
  const debounced = useDebounced(text, 250);
  const validationQuery = useQuery(labValidateQuery(client, endpointId, debounced));
  // a validation of an older text says nothing about this one
  const validation = debounced === text ? validationQuery.data : undefined;
  const issues: LabIssue[] = validation?.errors ?? [];
  const { caps, problem } = capabilitiesFrom(capsForm);

  const [shown, setShown] = useState<string>();
  const [requestId, setRequestId] = useState<string>();
  const live = useLabProgress(requestId);
  const run = useMutation({
    mutationFn: (rid: string) =>
      client.call('lab.run', { endpointId, request: { text, capabilities: caps, force, probe, requestId: rid } }),
    onSuccess: (r) => {
      qc.setQueryData(queryKeys.labRun(endpointId, r.id), r);
      void qc.invalidateQueries({ queryKey: queryKeys.labRuns(endpointId) });
      setShown(r.id);
    },
  });
  const startRun = () => {
    const rid = `lab-${Date.now()}`;
    setRequestId(rid);
    run.mutate(rid);
  };
  const shownRun = useQuery({ ...labRunQuery(client, endpointId, shown ?? ''), enabled: shown !== undefined });
  const runs = useQuery(labRunsQuery(client, endpointId));
  const pods = useQuery({ queryKey: queryKeys.labPods(endpointId), queryFn: () => client.call('sandbox.list', { endpointId }) });
  // the pods of the CRI endpoints whose pods this process measures: b may be one's ADD, from libcni's cache
  const endpoints = useQuery(endpointsQuery(client));
  const measured = (endpoints.data ?? []).filter((e) => e.kind === 'cri' && e.connected && e.capabilities.measurements);
  const endpointPodLists = useQueries({
    queries: measured.map((e) => ({
      queryKey: queryKeys.labPods(e.id),
      queryFn: () => client.call('sandbox.list', { endpointId: e.id }),
    })),
  });
  const endpointPods = measured.map((e, i) => ({ endpoint: e, pods: endpointPodLists[i]?.data ?? [] })).filter((g) => g.pods.length > 0);
  const [a, setA] = useState('');
  const [b, setB] = useState('');
  const diff = useQuery({ ...labDiffQuery(client, endpointId, a, b), enabled: a !== '' && b !== '' && a !== b });

  const save = useMutation({
    mutationFn: (fileName: string) => client.call('lab.save', { endpointId, request: { text, ...(fileName ? { fileName } : {}) } }),
  });

  const conflicts = validation?.conflicts ?? [];
  const canRun = validation?.ok === true && !problem && !run.isPending && (conflicts.length === 0 || force);
  const plugins = useMemo(() => [...new Map((validation?.plugins ?? []).map((p) => [p.index, p])).values()], [validation]);

  return {
    text,
    setText,
    source,
    validation,
    issues,
    plugins,
    conflicts,
    capsForm,
    setCapsForm,
    caps,
    problem,
    force,
    setForce,
    probe,
    setProbe,
    canRun,
    run,
    startRun,
    live,
    shown,
    setShown,
    shownRun: shownRun.data,
    runs: runs.data ?? [],
    pods: pods.data ?? [],
    endpointPods,
    compare: { a, b, setA, setB },
    diff,
    save,
  };
}

export type LabModel = ReturnType<typeof useLab>;
