/** Follows the progress events of one run request (matched by requestId) as they arrive. */
import { useEffect, useState } from 'react';
import type { TraceEntry } from '../../../../../shared/domain/sandbox';
import { useClient } from '../../../lib/connection-context';

export function useRunProgress(requestId: string | undefined): TraceEntry[] {
  const client = useClient();
  // steps are kept with the request they belong to, so a new request starts from none without a reset
  const [progress, setProgress] = useState<{ requestId?: string; steps: TraceEntry[] }>({ steps: [] });
  useEffect(() => {
    if (!requestId) return;
    return client.onEvent((e) => {
      if (e.kind === 'sandbox' && e.event.type === 'sandbox.progress' && e.event.requestId === requestId) {
        const entry = e.event.entry;
        setProgress((p) => (p.requestId === requestId ? { requestId, steps: [...p.steps, entry] } : { requestId, steps: [entry] }));
      }
    });
  }, [client, requestId]);
  return requestId !== undefined && progress.requestId === requestId ? progress.steps : [];
}
