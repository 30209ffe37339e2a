/** The application shell: sidebar navigation, endpoint switcher, engine health banner, then the current view. */
import { useEffect, useRef } from 'react';
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

/**
 * After a page is chosen in the sidebar the focus goes into it, not left in the sidebar: to what the page marks with
 * data-page-focus (the create form's first field, the pods list), else its main heading. A heading is not focusable
 * by Tab, so it gets tabindex -1 (focusable by script only). Returns false while the page has neither (still loading).
 */
export function focusPage(main: HTMLElement | null): boolean {
  if (!main) return false;
  const target = main.querySelector<HTMLElement>('[data-page-focus]') ?? main.querySelector<HTMLElement>('h1, h2');
  if (!target) return false;
  if (/^H\d$/.test(target.tagName) && !target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
  target.focus();
  return true;
}

/** focusPage once the page has its heading or field (it may render "Loading…" first), unless the user moved on */
function focusPageWhenReady(main: HTMLElement, from: Element | null): () => void {
  if (focusPage(main)) return () => {};
  const observer = new MutationObserver(() => {
    if (document.activeElement !== from) return stop();
    if (focusPage(main)) stop();
  });
  const timer = setTimeout(() => stop(), 5000);
  const stop = () => {
    observer.disconnect();
    clearTimeout(timer);
  };
  observer.observe(main, { childList: true, subtree: true });
  return stop;
}

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
  const mainRef = useRef<HTMLElement>(null);
  // set by a sidebar click, consumed once the chosen page has rendered
  const navigated = useRef(false);
  useEffect(() => {
    if (!navigated.current || !mainRef.current) return;
    navigated.current = false;
    return focusPageWhenReady(mainRef.current, document.activeElement);
  }, [view]);
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
                onClick={() => {
                  navigated.current = n.id !== view;
                  setView(n.id);
                }}
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
      <main className="main" ref={mainRef}>
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
