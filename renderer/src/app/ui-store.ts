/**
 * UI state only: which endpoint and view are shown, which pod is selected, which detail tab is open.
 * Engine data never lives here; it belongs to react-query.
 */
import { create } from 'zustand';
import { LOCAL_ENDPOINT_ID } from '../../../shared/domain/endpoints';
import type { PodSandboxConfigInput } from '../../../shared/domain/config';

export type View = 'pods' | 'create' | 'cni' | 'engine';
export type DetailTab = 'overview' | 'network' | 'ports' | 'bandwidth' | 'trace' | 'lifecycle' | 'raw';

interface UiState {
  endpointId: string;
  view: View;
  selectedId?: string;
  detailTab: DetailTab;
  /** a config handed to the create form by "clone into form" or an import; consumed once */
  formSeed?: { config: PodSandboxConfigInput; source: string; nonce: number };
  setEndpoint(id: string): void;
  setView(v: View): void;
  select(id: string | undefined): void;
  setDetailTab(t: DetailTab): void;
  cloneIntoForm(config: PodSandboxConfigInput, source: string): void;
}

export const useUi = create<UiState>((set) => ({
  endpointId: LOCAL_ENDPOINT_ID,
  view: 'pods',
  detailTab: 'overview',
  setEndpoint: (endpointId) => set({ endpointId, selectedId: undefined }),
  setView: (view) => set({ view }),
  select: (selectedId) => set({ selectedId }),
  setDetailTab: (detailTab) => set({ detailTab }),
  cloneIntoForm: (config, source) => set({ view: 'create', formSeed: { config, source, nonce: Date.now() } }),
}));
