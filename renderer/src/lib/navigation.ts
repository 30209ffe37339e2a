/**
 * What is on screen, like a URL would say it: the view, the open pod and its tab, and a config handed to the
 * create form. Features navigate through this store instead of importing each other; the app shell renders it.
 * UI state only: engine data belongs to react-query.
 */
import { createUiStore } from './ui-store';
import type { PodSandboxConfigInput } from '../../../shared/domain/config';

export type View = 'pods' | 'create' | 'images' | 'cni' | 'lab' | 'engine';
export type DetailTab = 'overview' | 'containers' | 'network' | 'reachability' | 'ports' | 'bandwidth' | 'trace' | 'lifecycle' | 'raw';

interface NavigationState {
  view: View;
  /** the pod whose detail is open (on the pods view) */
  selectedId?: string;
  detailTab: DetailTab;
  /** a config handed to the create form by "clone into form" or an import; consumed once */
  formSeed?: { config: PodSandboxConfigInput; source: string; nonce: number };
  /** a conflist text handed to the CNI lab by "Open in lab" / "New"; consumed once */
  labSeed?: { text: string; source: string; nonce: number };
  setView(v: View): void;
  select(id: string | undefined): void;
  setDetailTab(t: DetailTab): void;
  /** shows a pod's detail on the pods view */
  openPod(id: string, tab?: DetailTab): void;
  cloneIntoForm(config: PodSandboxConfigInput, source: string): void;
  consumeFormSeed(): void;
  openInLab(text: string, source: string): void;
  consumeLabSeed(): void;
}

export const useNavigation = createUiStore<NavigationState>((set) => ({
  view: 'pods',
  detailTab: 'overview',
  setView: (view) => set({ view }),
  select: (selectedId) => set({ selectedId }),
  setDetailTab: (detailTab) => set({ detailTab }),
  openPod: (selectedId, tab) => set((s) => ({ view: 'pods', selectedId, detailTab: tab ?? s.detailTab })),
  cloneIntoForm: (config, source) => set({ view: 'create', formSeed: { config, source, nonce: Date.now() } }),
  consumeFormSeed: () => set({ formSeed: undefined }),
  openInLab: (text, source) => set({ view: 'lab', labSeed: { text, source, nonce: Date.now() } }),
  consumeLabSeed: () => set({ labSeed: undefined }),
}));
