/** Pods table UI state: filters and the multi-selection for bulk actions. */
import { createUiStore } from '../../lib/ui-store';
import type { SandboxState } from '../../../../shared/domain/sandbox';

export interface PodFilters {
  text: string;
  namespace: string;
  state: SandboxState | '';
  /** "key=value" or "key" */
  label: string;
}

interface PodsUi {
  filters: PodFilters;
  checked: Set<string>;
  setFilter<K extends keyof PodFilters>(k: K, v: PodFilters[K]): void;
  clearFilters(): void;
  toggle(id: string): void;
  setChecked(ids: string[]): void;
}

const EMPTY: PodFilters = { text: '', namespace: '', state: '', label: '' };

export const usePodsUi = createUiStore<PodsUi>((set) => ({
  filters: EMPTY,
  checked: new Set(),
  setFilter: (k, v) => set((s) => ({ filters: { ...s.filters, [k]: v } })),
  clearFilters: () => set({ filters: EMPTY }),
  toggle: (id) =>
    set((s) => {
      const next = new Set(s.checked);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return { checked: next };
    }),
  setChecked: (ids) => set({ checked: new Set(ids) }),
}));
