/**
 * How the pods view splits the window between the list and the open pod's detail, remembered across reloads
 * (localStorage). Only the list's share is stored: the detail gets the rest.
 */
import { createUiStore } from '../../lib/ui-store';
import { persist } from 'zustand/middleware';

export const MIN_LIST_SHARE = 0.15;
export const MAX_LIST_SHARE = 0.85;
export const DEFAULT_LIST_SHARE = 0.4;

interface PodsLayout {
  /** fraction of the pods view's height the list takes while a detail is open */
  listShare: number;
  setListShare(share: number): void;
}

export const clampShare = (share: number): number =>
  Math.min(MAX_LIST_SHARE, Math.max(MIN_LIST_SHARE, Number.isFinite(share) ? share : DEFAULT_LIST_SHARE));

export const usePodsLayout = createUiStore<PodsLayout>()(
  persist(
    (set) => ({
      listShare: DEFAULT_LIST_SHARE,
      setListShare: (share) => set({ listShare: clampShare(share) }),
    }),
    { name: 'podscope.pods.layout', version: 1 },
  ),
);
