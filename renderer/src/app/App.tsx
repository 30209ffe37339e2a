/** The application shell: sidebar navigation, endpoint switcher, engine health banner, then the current view. */
import { useQuery } from '@tanstack/react-query';
import { useClient, useConnection } from '../lib/connection-context';
import { useEngineEvents } from './engine-events';
import { PodsPage } from '../features/pods/components/PodsPage';
import { CreatePage } from '../features/create/components/CreatePage';
import { ImagesPage } from '../features/images/components/ImagesPage';
import { CniPanel } from '../features/cni/components/CniPanel';
import { LabPage } from '../features/lab/components/LabPage';
import { EnginePage } from '../features/engine/components/EnginePage';
import { EngineBanner } from '../features/engine/components/EngineBanner';
import { EndpointSwitcher } from '../features/endpoints/components/EndpointSwitcher';
import { useEndpointId } from '../lib/endpoint';
import { podsQuery } from '../features/pods/api/queries';
import { useNavigation, type View } from '../lib/navigation';
import { useApplyTheme } from '../lib/theme';
import { ThemeSwitch } from '../lib/ui/ThemeSwitch';

const NAV: Array<{ id: View; label: string; hint: string }> = [
  { id: 'pods', label: 'Sandboxes', hint: 'pods, detail, trace' },
  { id: 'create', label: 'New sandbox', hint: 'form, preview, import' },
  { id: 'images', label: 'Images', hint: 'pull, inspect, remove' },
  { id: 'cni', label: 'CNI config', hint: 'conflists, plugins' },
  { id: 'lab', label: 'CNI lab', hint: 'dry-run, diff, save' },
  { id: 'engine', label: 'Engine', hint: 'conditions, dirs' },
];

export function App() {
  useEngineEvents();
  useApplyTheme();
  const client = useClient();
  const { environment } = useConnection();
  const view = useNavigation((s) => s.view);
  const setView = useNavigation((s) => s.setView);
  const endpointId = useEndpointId();
  const pods = useQuery(podsQuery(client, endpointId));
  const ready = pods.data?.filter((p) => p.state === 'SANDBOX_READY').length ?? 0;
  return (
    <div className="app">
      <nav className="sidebar" aria-label="Main">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span className="brand-name">Podscope</span>
          <span className="brand-mode">{environment.mode}</span>
        </div>
        <EndpointSwitcher />
        <ul className="nav">
          {NAV.map((n) => (
            <li key={n.id}>
              <button
                type="button"
                className={view === n.id ? 'nav-item nav-on' : 'nav-item'}
                aria-current={view === n.id ? 'page' : undefined}
                onClick={() => setView(n.id)}
              >
                <span className="nav-label">{n.label}</span>
                {n.id === 'pods' && pods.data && (
                  <span className="nav-count" title={`${ready} ready of ${pods.data.length}`}>
                    {ready}/{pods.data.length}
                  </span>
                )}
                <span className="nav-hint">{n.hint}</span>
              </button>
            </li>
          ))}
        </ul>
        <div className="sidebar-foot muted small">
          <ThemeSwitch />
          <kbd>↑</kbd>
          <kbd>↓</kbd> move · <kbd>Space</kbd> select · <kbd>Enter</kbd> open
        </div>
      </nav>
      <main className="main">
        <EngineBanner />
        {view === 'pods' && <PodsPage />}
        {view === 'create' && <CreatePage />}
        {view === 'images' && <ImagesPage />}
        {view === 'cni' && <CniPanel />}
        {view === 'lab' && <LabPage />}
        {view === 'engine' && <EnginePage />}
      </main>
    </div>
  );
}
