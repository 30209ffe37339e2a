/**
 * Tells the main process which pod rows this window shows of each CRI node listed: ListPodSandbox has no pod IPs, and
 * only the rows on screen get theirs read (one PodSandboxStatus each, cached there until the row changes). A scroll
 * settles before it is sent, so flinging through 10,000 rows asks about the rows it stops on. Each node hears only of
 * its own rows; a node whose rows all left the screen is told so (an empty list), once.
 */
import { useCallback, useEffect, useRef } from 'react';
import type { PodscopeClient } from '../../../../../shared/ipc/client';

const SETTLE_MS = 150;

export function useReportShownRows(
  client: PodscopeClient,
  /** the CRI nodes listed (the others need no report) */
  criNodes: string[],
  nodeOf: Map<string, string>,
): (ids: string[]) => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const last = useRef(new Map<string, string>());
  const nodesKey = criNodes.join('\u0000');
  useEffect(() => {
    last.current = new Map();
    return () => clearTimeout(timer.current);
  }, [nodesKey]);
  return useCallback(
    (ids: string[]) => {
      if (!nodesKey) return;
      const perNode = new Map<string, string[]>(nodesKey.split('\u0000').map((n) => [n, []]));
      for (const id of ids) perNode.get(nodeOf.get(id) ?? '')?.push(id);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => {
        for (const [endpointId, shown] of perNode) {
          const key = shown.join(',');
          if (last.current.get(endpointId) === key) continue;
          last.current.set(endpointId, key);
          client.call('endpoints.showing', { endpointId, ids: shown }).catch(() => {
            last.current.delete(endpointId); // sent again with the next change
          });
        }
      }, SETTLE_MS);
    },
    [client, nodesKey, nodeOf],
  );
}
