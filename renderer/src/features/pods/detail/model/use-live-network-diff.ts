/**
 * The live view of a pod's netns held against its CNI result: each interface's addresses marked, each route listed
 * or missing, and the counts the summary line says. Recomputed only when the view or the status changes.
 */
import { useMemo } from 'react';
import type { LiveNetworkView } from '../../../../../../shared/domain/live';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { cniClaims, diffCounts, diffInterfaces, diffRoutes, type InterfaceDiff, type RouteDiff } from './live-diff';

export interface LiveNetworkDiff {
  ifaces: InterfaceDiff[];
  routes: RouteDiff;
  /** addresses the CNI result lists that the kernel lacks */
  missing: number;
  /** addresses in the kernel the CNI result does not list */
  extra: number;
  /** routes the CNI result lists that the kernel lacks */
  routeMissing: number;
  /** everything the CNI result lists is in the kernel, and nothing beyond it */
  clean: boolean;
}

export function useLiveNetworkDiff(view: LiveNetworkView, s: SandboxStatus): LiveNetworkDiff {
  return useMemo(() => {
    const ifaces = diffInterfaces(view.interfaces, cniClaims(s));
    const routes = diffRoutes(view.routes, s);
    const { missing, extra } = diffCounts(ifaces);
    const routeMissing = routes.missing.length;
    return { ifaces, routes, missing, extra, routeMissing, clean: missing === 0 && extra === 0 && routeMissing === 0 };
  }, [view, s]);
}
