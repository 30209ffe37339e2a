/**
 * Which node the screens talk to: the local engine or a CRI runtime (containerd, CRI-O, a Podscope daemon, a kind
 * node's containerd in its own namespaces). Adding one offers the nodes discovered on this machine, one click each.
 */
import { useState } from 'react';
import {
  CniResultsDirSchema,
  DEFAULT_CNI_RESULTS_DIR,
  LOCAL_ENDPOINT_ID,
  LOCAL_ENDPOINT_LABEL,
  type EndpointView,
} from '../../../../../shared/domain/endpoints';
import { useClient } from '../../../lib/connection-context';
import { ConfirmDialog, Dialog } from '../../../lib/ui/Dialog';
import { ErrorView } from '../../../lib/ui/ErrorView';
import type { NodeView } from '../../../../../shared/domain/nodes';
import { useDiscoveredNodes, useEndpointMutations } from '../api/queries';
import { useEndpointId, useEndpointSelection, useEndpointsPolled } from '../../../lib/endpoint';

export function EndpointSwitcher() {
  const endpointId = useEndpointId();
  const setEndpoint = useEndpointSelection((s) => s.setEndpoint);
  const { data } = useEndpointsPolled();
  const [adding, setAdding] = useState(false);
  const current = data?.find((e) => e.id === endpointId);
  return (
    <div className="endpoint-box">
      <div className="endpoint">
        <span className={`dot ${current?.connected === false ? 'dot-bad' : 'dot-ok'}`} title={current?.error ?? 'connected'} />
        <select
          className="input input-endpoint"
          aria-label="Node"
          title={current?.label}
          value={endpointId}
          onChange={(e) => {
            if (e.target.value === '__add') setAdding(true);
            else setEndpoint(e.target.value);
          }}
        >
          {(data ?? [{ id: endpointId, label: LOCAL_ENDPOINT_LABEL, kind: 'podscope-engine' as const }]).map((e) => (
            // the label only: the runtime, version and socket of the selected one are in the note below
            <option key={e.id} value={e.id} title={'address' in e && e.address ? e.address : undefined}>
              {e.label}
            </option>
          ))}
          <option value="__add">Add node…</option>
        </select>
        <AddEndpointDialog open={adding} onClose={() => setAdding(false)} />
      </div>
      {current && <CapabilityNote endpoint={current} />}
    </div>
  );
}

const MISSING: Array<[keyof EndpointView['capabilities'], string]> = [
  ['pluginTrace', 'CNI plugin trace'],
  ['preview', 'runtimeConfig preview'],
  ['cniConfig', 'CNI config'],
  ['liveNetwork', 'live kernel view'],
  ['events', 'live events'],
];

/** For a CRI endpoint: which runtime answers, and what it cannot give (those screens say so instead of guessing). */
function CapabilityNote({ endpoint }: { endpoint: EndpointView }) {
  if (endpoint.kind !== 'cri') return null;
  const missing = MISSING.filter(([k]) => !endpoint.capabilities[k]);
  return (
    <div className="endpoint-note small" data-testid="endpoint-capabilities">
      {!endpoint.connected ? (
        <div className="text-bad" title={endpoint.error} data-testid="endpoint-lost">
          lost{endpoint.error ? `: ${endpoint.error}` : ''}
        </div>
      ) : (
        <div className="muted">
          CRI · {endpoint.runtimeName ?? 'runtime'} {endpoint.runtimeVersion ?? ''}
        </div>
      )}
      {endpoint.address && (
        <div className="mono muted endpoint-address" title={endpoint.address}>
          {/* clipped at the start so the socket's own name stays visible */}
          <span dir="ltr">{endpoint.address.replace(/^unix:\/\//, '')}</span>
        </div>
      )}
      {endpoint.cniResultsDir && (
        <div
          className="mono muted small endpoint-address"
          title={`libcni results dir: ${endpoint.cniResultsDir}`}
          data-testid="endpoint-cni-results"
        >
          <span dir="ltr">CNI results {endpoint.cniResultsDir}</span>
        </div>
      )}
      <EndpointManage endpoint={endpoint} />
      {missing.length > 0 && (
        <div className="endpoint-missing">
          <span className="muted">not from this runtime: </span>
          {missing.map(([k, label], i) => (
            <span key={k} className="endpoint-missing-item">
              {label}
              {k === 'events' ? ' (list re-read every few seconds)' : ''}
              {i < missing.length - 1 ? ', ' : ''}
            </span>
          ))}
        </div>
      )}
    </div>
  );
}

export function AddEndpointDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const client = useClient();
  const setEndpoint = useEndpointSelection((s) => s.setEndpoint);
  const { add } = useEndpointMutations(client);
  const [address, setAddress] = useState('/run/containerd/containerd.sock');
  const [label, setLabel] = useState('');
  const [resultsDir, setResultsDir] = useState(DEFAULT_CNI_RESULTS_DIR);
  // checked as the engine checks it, so the field says what is wrong before anything is dialed
  const resultsCheck = CniResultsDirSchema.safeParse(resultsDir);
  const resultsError = resultsCheck.success ? undefined : resultsCheck.error.issues[0]?.message;
  // a stale error must not greet the next attempt
  const close = () => {
    add.reset();
    onClose();
  };
  const connect = (req: { address: string; label?: string }) =>
    add.mutate(resultsDir.trim() === DEFAULT_CNI_RESULTS_DIR ? req : { ...req, cniResultsDir: resultsDir.trim() }, {
      onSuccess: (view) => {
        setEndpoint(view.id);
        close();
      },
    });
  return (
    <Dialog
      open={open}
      onClose={close}
      title="Add a node"
      footer={
        <>
          <button type="button" className="btn" onClick={close}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-primary"
            disabled={!address.trim() || add.isPending || resultsError !== undefined}
            onClick={() => connect({ address: address.trim(), ...(label.trim() ? { label: label.trim() } : {}) })}
          >
            {add.isPending ? 'Connecting…' : 'Connect'}
          </button>
        </>
      }
    >
      <div className="stack-s">
        <DiscoveredNodes open={open} onAdd={connect} busy={add.isPending || resultsError !== undefined} />
        <label className="field">
          <span className="label">Or a socket path</span>
          <input
            className="input mono"
            value={address}
            onChange={(e) => setAddress(e.target.value)}
            placeholder="unix:///run/containerd/containerd.sock"
          />
        </label>
        <label className="field">
          <span className="label">Label (optional)</span>
          <input className="input" value={label} onChange={(e) => setLabel(e.target.value)} placeholder="containerd" />
        </label>
        <label className="field">
          <span className="label">libcni results dir</span>
          <input
            className="input mono"
            aria-label="libcni results dir"
            value={resultsDir}
            onChange={(e) => setResultsDir(e.target.value)}
            aria-invalid={resultsError !== undefined}
            aria-describedby="cni-results-dir-note"
          />
          <span id="cni-results-dir-note" className={`small ${resultsError ? 'text-bad' : 'muted'}`} data-testid="cni-results-dir-note">
            {resultsError
              ? `libcni results dir: ${resultsError}`
              : "where the runtime's libcni keeps each attachment's result (its pods' networks are read there); Podscope only reads it"}
          </span>
        </label>
        <p className="small muted">
          Podscope calls the CRI Version RPC before adding it. Sandboxes on a CRI node show what CRI exposes; the per-plugin trace and
          runtimeConfig preview exist only for Podscope's own engine.
        </p>
        {add.error && <ErrorView error={add.error} title="Could not add the node" />}
      </div>
    </Dialog>
  );
}

const bare = (address: string) => address.replace(/^unix:\/\//, '');

/** a node's namespaces in a few words: "host", or which of net, mnt, pid, uts are its own */
function namespacesText(n: NodeView): string {
  const own = (['net', 'mnt', 'pid', 'uts'] as const).filter((k) => !n.namespaces[k].host);
  return own.length ? `own ${own.join(', ')}` : 'host namespaces';
}

/** The nodes discovered on this machine: one click adds one (those already added say so). */
function DiscoveredNodes({
  open,
  onAdd,
  busy,
}: {
  open: boolean;
  onAdd: (req: { address: string; label: string }) => void;
  busy: boolean;
}) {
  const client = useClient();
  const nodes = useDiscoveredNodes(client, open);
  const { data: endpoints } = useEndpointsPolled();
  const added = new Set((endpoints ?? []).map((e) => ('address' in e && e.address ? bare(e.address) : '')));
  if (nodes.isPending) return <p className="small muted">Looking for runtimes on this machine…</p>;
  if (nodes.error) return <ErrorView error={nodes.error} title="Could not look for nodes" />;
  const found = nodes.data?.nodes ?? [];
  return (
    <div className="stack-s" data-testid="discovered-nodes">
      <span className="label">On this machine</span>
      {found.length === 0 && (
        <p className="small muted">
          No CRI runtime found (sockets of containerd, CRI-O, k3s, a Podscope daemon, or runtimes in other namespaces).
        </p>
      )}
      <ul className="discovered-nodes">
        {found.map((n) => (
          <li key={n.endpoint} className="discovered-node" data-testid="discovered-node">
            <div className="discovered-node-text">
              <strong>{n.name}</strong>{' '}
              <span className="muted small">
                {n.runtimeName} {n.runtimeVersion} · {namespacesText(n)}
                {n.addresses.length ? ` · ${n.addresses.map((a) => a.cidr).join(', ')}` : ''}
                {n.podSubnets.length ? ` · pods ${n.podSubnets.map((s) => s.cidr).join(', ')}` : ''}
              </span>
              <div className="mono muted small endpoint-address" title={n.endpoint}>
                <span dir="ltr">{n.endpoint}</span>
              </div>
            </div>
            {added.has(n.endpoint) ? (
              <span className="small muted">added</span>
            ) : (
              <button type="button" className="btn btn-small" disabled={busy} onClick={() => onAdd({ address: n.endpoint, label: n.name })}>
                Add
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Rename or remove an added endpoint (the built-in engine is neither). */
function EndpointManage({ endpoint }: { endpoint: EndpointView }) {
  const client = useClient();
  const setEndpoint = useEndpointSelection((s) => s.setEndpoint);
  const { remove, rename } = useEndpointMutations(client);
  const [renaming, setRenaming] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const [label, setLabel] = useState(endpoint.label);
  if (endpoint.id === LOCAL_ENDPOINT_ID) return null;
  const closeRename = () => {
    rename.reset();
    setRenaming(false);
  };
  return (
    <div className="endpoint-manage">
      <button
        type="button"
        className="btn btn-ghost btn-small"
        onClick={() => {
          setLabel(endpoint.label);
          setRenaming(true);
        }}
      >
        Rename…
      </button>
      <button type="button" className="btn btn-ghost btn-small" onClick={() => setConfirmRemove(true)}>
        Remove…
      </button>
      {remove.error && <ErrorView error={remove.error} title="Could not remove the node" />}
      <Dialog
        open={renaming}
        onClose={closeRename}
        title="Rename the node"
        footer={
          <>
            <button type="button" className="btn" onClick={closeRename}>
              Cancel
            </button>
            <button
              type="button"
              className="btn btn-primary"
              disabled={!label.trim() || rename.isPending}
              onClick={() => rename.mutate({ id: endpoint.id, label: label.trim() }, { onSuccess: closeRename })}
            >
              Save
            </button>
          </>
        }
      >
        <label className="field">
          <span className="label">Label</span>
          <input className="input" value={label} onChange={(e) => setLabel(e.target.value)} maxLength={200} />
        </label>
        {rename.error && <ErrorView error={rename.error} title="Could not rename the node" />}
      </Dialog>
      <ConfirmDialog
        open={confirmRemove}
        onClose={() => setConfirmRemove(false)}
        title={`Remove ${endpoint.label}?`}
        danger
        confirmLabel="Remove"
        body={
          <p>Podscope closes its connection to {endpoint.address ?? 'this node'}. Nothing on the runtime changes; you can add it again.</p>
        }
        onConfirm={() => {
          setConfirmRemove(false);
          remove.mutate(endpoint.id, { onSuccess: () => setEndpoint(LOCAL_ENDPOINT_ID) });
        }}
      />
    </div>
  );
}
