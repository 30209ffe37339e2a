/**
 * The CNI lab page: edit a conflist, pick capability args, Run it in a throwaway netns (trace live, then the result,
 * the kernel state created and the leak verdict), compare two runs (or a run and a live pod) plugin by plugin, and
 * Save into the conf dir after the warning. The local engine only: a CRI endpoint has no lab.
 */
import { useEffect, useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { LOCAL_ENDPOINT_ID } from '../../../../../shared/domain/endpoints';
import { PodscopeError } from '../../../../../shared/domain/errors';
import { parseRateInput } from '../../../../../shared/domain/bandwidth';
import {
  LAB_SAVE_WARNING,
  type LabCapabilities,
  type LabIssue,
  type LabPluginTrace,
  type LabProbe,
  type LabRun,
} from '../../../../../shared/domain/lab';
import { useClient } from '../../../lib/connection-context';
import { useEndpointId } from '../../../lib/endpoint';
import { dateTime, ms } from '../../../lib/format';
import { useNavigation } from '../../../lib/navigation';
import { useDebounced } from '../../../lib/use-debounced';
import { ConfirmDialog } from '../../../lib/ui/Dialog';
import { NotAvailable } from '../../../lib/ui/EmptyState';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { Pill } from '../../../lib/ui/StatusPill';
import { labDiffQuery, labKeys, labRunQuery, labRunsQuery, labValidateQuery } from '../api/queries';
import { ConflistEditor } from './ConflistEditor';
import { DiffView } from './DiffView';
import { PluginTrace, RunView } from './RunView';

const STARTER = JSON.stringify(
  {
    cniVersion: '1.0.0',
    name: 'lab-net',
    plugins: [
      {
        type: 'bridge',
        bridge: 'lab0',
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: '10.99.0.0/24' }]] },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  },
  null,
  2,
);

interface CapsForm {
  ports: string;
  ingress: string;
  egress: string;
  dns: string;
  ips: string;
  mac: string;
  cgroupPath: string;
}

const list = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/** the form's text fields as capability args; a problem names the field */
export function capabilitiesFrom(f: CapsForm): { caps: LabCapabilities; problem?: string } {
  const caps: LabCapabilities = {};
  const ports = list(f.ports);
  if (ports.length) {
    const mapped = [];
    for (const p of ports) {
      const m = /^(\d+):(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(p);
      if (!m) return { caps, problem: `port mapping ${JSON.stringify(p)}: write HOST:CONTAINER[/tcp|udp|sctp]` };
      mapped.push({
        hostPort: Number(m[1]),
        containerPort: Number(m[2]),
        protocol: (m[3]?.toLowerCase() ?? 'tcp') as 'tcp' | 'udp' | 'sctp',
      });
    }
    caps.portMappings = mapped;
  }
  if (f.ingress || f.egress) {
    const rates: Array<number | undefined> = [];
    for (const [dir, text] of [
      ['ingress', f.ingress],
      ['egress', f.egress],
    ] as const) {
      const r = text.trim() ? parseRateInput(text) : undefined;
      if (r && 'error' in r) return { caps, problem: `${dir} bandwidth ${r.error} (bit/s as a quantity: 10M, 1Gi, 500k)` };
      rates.push(r?.bitsPerSecond);
    }
    caps.bandwidth = { ingressRate: rates[0], egressRate: rates[1] };
  }
  if (list(f.dns).length) caps.dns = { servers: list(f.dns) };
  if (list(f.ips).length) caps.ips = list(f.ips);
  if (f.mac) caps.mac = f.mac;
  if (f.cgroupPath) caps.cgroupPath = f.cgroupPath;
  return { caps };
}

function useLabProgress(requestId: string | undefined): { plugins: LabPluginTrace[]; probe?: LabProbe } {
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

function Lab({ endpointId }: { endpointId: string }) {
  const client = useClient();
  const qc = useQueryClient();
  const seed = useNavigation((s) => s.labSeed);
  const consumeLabSeed = useNavigation((s) => s.consumeLabSeed);
  // "Open in lab" and "New" switch to this view, which mounts the page: the seed is read once, then dropped
  const [text, setText] = useState(seed?.text ?? STARTER);
  const [source] = useState(seed?.source ?? 'starter');
  useEffect(() => {
    if (seed) consumeLabSeed();
  }, [seed, consumeLabSeed]);
  const [form, setForm] = useState<CapsForm>({ ports: '', ingress: '', egress: '', dns: '', ips: '', mac: '', cgroupPath: '' });
  const [force, setForce] = useState(false);
  const [probe, setProbe] = useState(false);
  const debounced = useDebounced(text, 250);
  const validation = useQuery(labValidateQuery(client, endpointId, debounced));
  const v = debounced === text ? validation.data : undefined;
  const issues: LabIssue[] = v?.errors ?? [];
  const { caps, problem } = capabilitiesFrom(form);

  const [requestId, setRequestId] = useState<string>();
  const live = useLabProgress(requestId);
  const run = useMutation({
    mutationFn: (rid: string) =>
      client.call('lab.run', { endpointId, request: { text, capabilities: caps, force, probe, requestId: rid } }),
    onSuccess: (r) => {
      qc.setQueryData(labKeys.run(endpointId, r.id), r);
      void qc.invalidateQueries({ queryKey: labKeys.runs(endpointId) });
      setShown(r.id);
    },
  });
  const [shown, setShown] = useState<string>();
  const shownRun = useQuery({ ...labRunQuery(client, endpointId, shown ?? ''), enabled: shown !== undefined });
  const runs = useQuery(labRunsQuery(client, endpointId));
  const pods = useQuery({ queryKey: ['lab', endpointId, 'pods'], queryFn: () => client.call('sandbox.list', { endpointId }) });
  const [a, setA] = useState('');
  const [b, setB] = useState('');
  const diff = useQuery({ ...labDiffQuery(client, endpointId, a, b), enabled: a !== '' && b !== '' && a !== b });

  const [fileName, setFileName] = useState('');
  const [confirmSave, setConfirmSave] = useState(false);
  const save = useMutation({
    mutationFn: () => client.call('lab.save', { endpointId, request: { text, ...(fileName ? { fileName } : {}) } }),
  });

  const conflicts = v?.conflicts ?? [];
  const canRun = v?.ok === true && !problem && !run.isPending && (conflicts.length === 0 || force);
  const pluginsById = useMemo(() => new Map((v?.plugins ?? []).map((p) => [p.index, p])), [v]);

  return (
    <div className="page stack" data-testid="lab-page">
      <header className="page-head">
        <h2>CNI lab</h2>
        <span className="muted small">from {source}</span>
        <span className="toolbar-spacer" />
        {v &&
          (v.ok ? (
            <Pill tone="ok">valid</Pill>
          ) : (
            <Pill tone="bad">
              {issues.length} error{issues.length === 1 ? '' : 's'}
            </Pill>
          ))}
        {v?.ok && (
          <span className="mono muted small">
            {v.name} · cniVersion {v.cniVersion} · CHECK {v.checkSupported ? 'runs' : 'skipped'}
          </span>
        )}
      </header>
      <div className="lab-top">
        <div className="stack-s">
          <ConflistEditor value={text} onChange={setText} issues={issues} />
          {v && v.plugins.length > 0 && (
            <table className="table" data-testid="lab-plugins">
              <thead>
                <tr>
                  <th>#</th>
                  <th>type</th>
                  <th>binary</th>
                  <th>checked with</th>
                </tr>
              </thead>
              <tbody>
                {[...pluginsById.values()].map((p) => (
                  <tr key={p.index}>
                    <td className="mono muted">{p.index}</td>
                    <td className="mono">
                      <b>{p.type}</b>
                    </td>
                    <td className="mono small">{p.binary ?? <span className="text-bad">not found in bin dirs</span>}</td>
                    <td className="mono small muted">{p.schema ?? 'envelope only'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {v?.warnings.map((w) => (
            <div key={w} className="small muted">
              ⚠ {w}
            </div>
          ))}
        </div>
        <div className="stack-s lab-side">
          <div className="section-head">
            <strong>Capability args</strong>
          </div>
          <label className="lab-field">
            port mappings{' '}
            <input
              className="input mono"
              placeholder="28080:80/tcp, …"
              value={form.ports}
              onChange={(e) => setForm({ ...form, ports: e.target.value })}
            />
          </label>
          <label className="lab-field">
            ingress bit/s{' '}
            <input
              className="input mono"
              placeholder="10M"
              value={form.ingress}
              onChange={(e) => setForm({ ...form, ingress: e.target.value })}
            />
          </label>
          <label className="lab-field">
            egress bit/s{' '}
            <input
              className="input mono"
              placeholder="5M"
              value={form.egress}
              onChange={(e) => setForm({ ...form, egress: e.target.value })}
            />
          </label>
          <label className="lab-field">
            dns servers <input className="input mono" value={form.dns} onChange={(e) => setForm({ ...form, dns: e.target.value })} />
          </label>
          <label className="lab-field">
            ips{' '}
            <input
              className="input mono"
              placeholder="10.99.0.9/24"
              value={form.ips}
              onChange={(e) => setForm({ ...form, ips: e.target.value })}
            />
          </label>
          <label className="lab-field">
            mac <input className="input mono" value={form.mac} onChange={(e) => setForm({ ...form, mac: e.target.value })} />
          </label>
          <label className="lab-field">
            cgroupPath{' '}
            <input className="input mono" value={form.cgroupPath} onChange={(e) => setForm({ ...form, cgroupPath: e.target.value })} />
          </label>
          {problem && <div className="small text-bad">{problem}</div>}
          {conflicts.length > 0 && (
            <div className="callout callout-warn small" data-testid="lab-conflicts">
              <div className="callout-title">This conflist shares networking with live sandboxes — a run touches them</div>
              {conflicts.map((c) => (
                <div key={c.sandboxId + c.network}>
                  <span className="mono">{c.sandboxName || c.sandboxId.slice(0, 13)}</span> ({c.network}): {c.shares.join(', ')}
                </div>
              ))}
              <label>
                <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> run anyway (force)
              </label>
            </div>
          )}
          <label className="small">
            <input type="checkbox" checked={probe} onChange={(e) => setProbe(e.target.checked)} /> probe reachability after ADD (host →
            netns address{caps.portMappings?.length ? ', host ports' : ''}), before DEL
          </label>
          <div className="toolbar toolbar-plain">
            <button
              type="button"
              className="btn btn-primary"
              disabled={!canRun}
              onClick={() => {
                const rid = `lab-${Date.now()}`;
                setRequestId(rid);
                run.mutate(rid);
              }}
            >
              {run.isPending ? 'Running…' : 'Run'}
            </button>
            <button type="button" className="btn" disabled={v?.ok !== true} onClick={() => setConfirmSave(true)}>
              Save…
            </button>
          </div>
          {save.data && (
            <div className="callout callout-ok small" data-testid="lab-saved">
              Saved {save.data.path}
              {save.data.backup ? ` (previous kept as ${save.data.backup})` : ''}
            </div>
          )}
          {save.error && <ErrorView error={save.error} title="Save failed" />}
        </div>
      </div>
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
      {shownRun.data && <RunView run={shownRun.data as LabRun} />}
      <section className="section">
        <div className="section-head">
          <strong>Runs</strong>
          <span className="muted small">kept under the state dir; pick a and b to compare</span>
        </div>
        <table className="table" data-testid="lab-runs">
          <thead>
            <tr>
              <th>a</th>
              <th>b</th>
              <th>run</th>
              <th>created</th>
              <th>network</th>
              <th>plugins</th>
              <th>result</th>
              <th>left</th>
              <th>time</th>
            </tr>
          </thead>
          <tbody>
            {(runs.data ?? []).map((r) => (
              <tr key={r.id}>
                <td>
                  <input type="radio" name="lab-a" aria-label={`a ${r.id}`} checked={a === r.id} onChange={() => setA(r.id)} />
                </td>
                <td>
                  <input type="radio" name="lab-b" aria-label={`b ${r.id}`} checked={b === r.id} onChange={() => setB(r.id)} />
                </td>
                <td>
                  <button type="button" className="link mono" onClick={() => setShown(r.id)}>
                    {r.id}
                  </button>
                </td>
                <td className="small muted">{dateTime(r.createdAt)}</td>
                <td className="mono small">{r.name}</td>
                <td className="mono small">{r.pluginTypes.join(', ')}</td>
                <td>{r.success ? <Pill tone="ok">ok</Pill> : <Pill tone="bad">{r.addOk ? 'failed' : 'ADD failed'}</Pill>}</td>
                <td className="mono small">{r.leaked}</td>
                <td className="mono small muted">{ms(r.durationMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {(pods.data ?? []).length > 0 && (
          <label className="small">
            or compare run a with a live pod&apos;s ADD as b:{' '}
            <select className="input" value={b.startsWith('sandbox:') ? b : ''} onChange={(e) => setB(e.target.value)}>
              <option value="">—</option>
              {(pods.data ?? []).map((p) => (
                <option key={p.id} value={`sandbox:${p.id}`}>
                  {p.name || p.id.slice(0, 13)}
                </option>
              ))}
            </select>
          </label>
        )}
      </section>
      {diff.error && <ErrorView error={diff.error} title="Cannot compare" />}
      {diff.data && <DiffView diff={diff.data} />}
      <ConfirmDialog
        open={confirmSave}
        title="Save into the conf dir"
        confirmLabel="Save"
        danger
        body={
          <div className="stack-s">
            <div className="callout callout-warn small">{LAB_SAVE_WARNING}</div>
            <label className="lab-field">
              file name{' '}
              <input
                className="input mono"
                placeholder={`${v?.name ?? 'network'}.conflist`}
                value={fileName}
                onChange={(e) => setFileName(e.target.value)}
              />
            </label>
            <div className="small muted">
              Written atomically (temp file + rename); an existing file is kept as &lt;file&gt;.bak-&lt;time&gt;.
            </div>
          </div>
        }
        onConfirm={() => {
          setConfirmSave(false);
          save.mutate();
        }}
        onClose={() => setConfirmSave(false)}
      />
    </div>
  );
}
