/** Which runtime the screens talk to: the local engine or a CRI endpoint (containerd, CRI-O, a Podscope daemon). */
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../../lib/connection-context';
import { Dialog } from '../../../lib/ui/Dialog';
import { ErrorView } from '../../../lib/ui/ErrorView';
import { useUi } from '../../../app/ui-store';
import { endpointsQuery, useEndpointMutations } from '../api/queries';

export function EndpointSwitcher() {
  const client = useClient();
  const endpointId = useUi((s) => s.endpointId);
  const setEndpoint = useUi((s) => s.setEndpoint);
  const { data } = useQuery(endpointsQuery(client));
  const [adding, setAdding] = useState(false);
  const current = data?.find((e) => e.id === endpointId);
  return (
    <div className="endpoint">
      <span className={`dot ${current?.connected === false ? 'dot-bad' : 'dot-ok'}`} title={current?.error ?? 'connected'} />
      <select
        className="input input-endpoint"
        aria-label="Endpoint"
        value={endpointId}
        onChange={(e) => {
          if (e.target.value === '__add') setAdding(true);
          else setEndpoint(e.target.value);
        }}
      >
        {(data ?? [{ id: endpointId, label: 'Local engine', kind: 'podscope-engine' as const }]).map((e) => (
          <option key={e.id} value={e.id}>
            {e.label}
            {'runtimeName' in e && e.runtimeName ? ` — ${e.runtimeName} ${e.runtimeVersion ?? ''}` : ''}
            {'address' in e && e.address ? ` (${e.address})` : ''}
          </option>
        ))}
        <option value="__add">Add CRI endpoint…</option>
      </select>
      <AddEndpointDialog open={adding} onClose={() => setAdding(false)} />
    </div>
  );
}

export function AddEndpointDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const client = useClient();
  const setEndpoint = useUi((s) => s.setEndpoint);
  const { add } = useEndpointMutations(client);
  const [address, setAddress] = useState('/run/containerd/containerd.sock');
  const [label, setLabel] = useState('');
  return (
    <Dialog
      open={open}
      onClose={() => {
        add.reset();
        onClose();
      }}
      title="Add a CRI endpoint"
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-primary"
            disabled={!address.trim() || add.isPending}
            onClick={() =>
              add.mutate(
                { address: address.trim(), ...(label.trim() ? { label: label.trim() } : {}) },
                {
                  onSuccess: (view) => {
                    setEndpoint(view.id);
                    onClose();
                  },
                },
              )
            }
          >
            {add.isPending ? 'Connecting…' : 'Connect'}
          </button>
        </>
      }
    >
      <div className="stack-s">
        <label className="field">
          <span className="label">Socket path</span>
          <input className="input mono" value={address} onChange={(e) => setAddress(e.target.value)} placeholder="unix:///run/containerd/containerd.sock" />
        </label>
        <label className="field">
          <span className="label">Label (optional)</span>
          <input className="input" value={label} onChange={(e) => setLabel(e.target.value)} placeholder="containerd" />
        </label>
        <p className="small muted">
          Podscope calls the CRI Version RPC before adding it. Sandboxes on a CRI endpoint show what CRI exposes; the per-plugin trace and
          runtimeConfig preview exist only for Podscope's own engine.
        </p>
        {add.error && <ErrorView error={add.error} title="Could not add the endpoint" />}
      </div>
    </Dialog>
  );
}
