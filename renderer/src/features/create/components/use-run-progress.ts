/** Follows the progress events of one run request (matched by requestId) as they arrive. */
import { useEffect, useState } from 'react';
import type { TraceEntry } from '../../../../../shared/domain/sandbox';
import { useClient } from '../../../lib/connection-context';

export function useRunProgress(requestId: string | undefined): TraceEntry[] {
  const client = useClient();
  const [steps, setSteps] = useState<TraceEntry[]>([]);
  useEffect(() => {
    setSteps([]);
    if (!requestId) return;
    return client.onEvent((e) => {
      if (e.kind === 'sandbox' && e.event.type === 'sandbox.progress' && e.event.requestId === requestId) {
        const entry = e.event.entry;
        setSteps((s) => [...s, entry]);
      }
    });
  }, [client, requestId]);
  return steps;
}
