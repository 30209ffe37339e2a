/**
 * Tells the main process which pod rows this window shows of a CRI endpoint: ListPodSandbox has no pod IPs, and
 * only the rows on screen get theirs read (one PodSandboxStatus each, cached there until the row changes). A
 * scroll settles before it is sent, so flinging through 10,000 rows asks about the rows it stops on.
 */
import { useCallback, useEffect, useRef } from 'react';
import type { PodscopeClient } from '../../../../../shared/ipc/client';

const SETTLE_MS = 150;

export function useReportShownRows(client: PodscopeClient, endpointId: string, enabled: boolean): (ids: string[]) => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const last = useRef('');
  useEffect(() => {
    last.current = '';
    return () => clearTimeout(timer.current);
  }, [endpointId]);
  return useCallback(
    (ids: string[]) => {
      if (!enabled) return;
      const key = ids.join(',');
      if (key === last.current) return;
      clearTimeout(timer.current);
      timer.current = setTimeout(() => {
        last.current = key;
        client.call('endpoints.showing', { endpointId, ids }).catch(() => {
          last.current = ''; // sent again with the next change
        });
      }, SETTLE_MS);
    },
    [client, endpointId, enabled],
  );
}
