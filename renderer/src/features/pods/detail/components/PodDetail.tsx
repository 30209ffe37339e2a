/** The selected sandbox: header with identity and actions, then one tab per aspect. */
import { useQuery } from '@tanstack/react-query';
import type { SandboxSummary } from '../../../../../../shared/domain/sandbox';
import { useClient } from '../../../../lib/connection-context';
import { ErrorView } from '../../../../lib/ui/ErrorView';
import { StatePill, Pill } from '../../../../lib/ui/StatusPill';
import { Tabs, type TabDef } from '../../../../lib/ui/Tabs';
import { useKeptScroll } from '../../../../lib/use-kept-scroll';
import { CopyButton } from '../../../../lib/ui/CopyButton';
import { useNavigation, type DetailTab } from '../../../../lib/navigation';
import { useCurrentEndpoint, useEndpointCapabilities, useEndpointId } from '../../../../lib/endpoint';
import { PodActions } from '../../components/PodActions';
import { asNewPodConfig } from '../../../../../../shared/domain/crictl-format';
import { podStatusQuery } from '../api/queries';
import { OverviewTab } from './OverviewTab';
import { NetworkTab } from './NetworkTab';
import { PortsTab } from './PortsTab';
import { BandwidthTab } from './BandwidthTab';
import { TraceTab } from './TraceTab';
import { LifecycleTab } from './LifecycleTab';
import { RawTab } from './RawTab';
import { PodContainers } from './PodContainers';
import { NetworkVerdict } from './NetworkVerdict';
import { ReachabilityPanel } from './ReachabilityPanel';
import { useReachability } from '../api/use-reachability';
import { networkVerdict } from '../model/verdict';
import { ContainersTab } from './ContainersTab';
import type { ContainerSummary } from '../../../../../../shared/domain/container';

export function PodDetail({ summary, containers = [] }: { summary: SandboxSummary; containers?: ContainerSummary[] }) {
  const client = useClient();
  const endpointId = useEndpointId();
  const tab = useNavigation((s) => s.detailTab);
  const setTab = useNavigation((s) => s.setDetailTab);
  const select = useNavigation((s) => s.select);
  const cloneIntoForm = useNavigation((s) => s.cloneIntoForm);
  const caps = useEndpointCapabilities();
  const endpoint = useCurrentEndpoint();
  const runtime =
    endpoint?.kind === 'cri' ? [endpoint.runtimeName, endpoint.runtimeVersion].filter(Boolean).join(' ') || undefined : undefined;
  // without a recorded trace (foreign runtimes) a count of 0 calls would be a claim; say n/a instead
  const traced = caps.pluginTrace;
  const status = useQuery(podStatusQuery(client, endpointId, summary.id));
  // each tab (of each pod) gets back the scroll position it was left at
  const [scrollRef, onScroll] = useKeptScroll<HTMLDivElement>(`${summary.id}/${tab}`);
  const s = status.data;
  const plugins = s?.trace.filter((t) => t.plugin) ?? [];
  // counted over the rows the tab shows: a failed CHECK or ADD also records its failed network step, which is no row
  // a CHECK failing with a known defect of the plugin's release is a warning, counted apart from failures
  const isDefect = (t: (typeof plugins)[number]) => (t.error?.details as { knownDefect?: unknown } | undefined)?.knownDefect !== undefined;
  const failures = plugins.filter((t) => !t.ok && !isDefect(t)).length;
  const defects = plugins.filter((t) => !t.ok && isDefect(t)).length;
  const dropped = s?.portMappings.filter((d) => !d.passed).length ?? 0;
  const reach = useReachability(summary.id);
  const verdict = networkVerdict(status.data ?? summary, reach.report);

  const tabs: TabDef<DetailTab>[] = [
    { id: 'overview', label: 'Overview' },
    { id: 'containers', label: 'Containers', badge: containers.length || undefined },
    { id: 'network', label: 'Network' },
    {
      id: 'reachability',
      label: 'Reachability',
      badge: verdict.kind === 'failing' ? `${verdict.failing.length} failing` : verdict.kind === 'shadowed' ? verdict.label : undefined,
    },
    { id: 'ports', label: 'Port mappings', badge: s ? `${s.portMappings.length}${dropped ? ` · ${dropped} dropped` : ''}` : undefined },
    { id: 'bandwidth', label: 'Bandwidth', badge: s?.bandwidthAnalysis.error ? '!' : undefined },
    {
      id: 'trace',
      label: 'CNI trace',
      badge: !traced
        ? 'n/a'
        : s
          ? failures || defects
            ? [plugins.length, failures ? `${failures} failed` : '', defects ? `${defects} known defect${defects === 1 ? '' : 's'}` : '']
                .filter((x) => x !== '')
                .join(' · ')
            : plugins.length
          : undefined,
    },
    { id: 'lifecycle', label: 'Lifecycle' },
    { id: 'raw', label: 'Raw status' },
  ];

  return (
    <div className="detail" aria-label={`Sandbox ${summary.metadata.name}`}>
      <header className="detail-head">
        <div className="detail-title">
          <h2>
            <span className="muted">{summary.metadata.namespace}/</span>
            {summary.metadata.name}
          </h2>
          <StatePill state={summary.state} reason={summary.notReadyReason} pending={!!summary.cleanupPending?.length} />
          {summary.hostNetwork && <Pill tone="info">host network</Pill>}
          {/* Ready is the runtime's word for the pause; the network's own verdict sits beside it, so "Ready" never stands
              alone while paths fail */}
          {reach.known && reach.available && !summary.hostNetwork && (
            <span className="pill-wrap" data-testid="header-net-verdict" data-verdict={verdict.kind}>
              <Pill tone={verdict.tone} title={verdict.detail}>
                network: {verdict.label}
              </Pill>
            </span>
          )}
          {s?.lastError && (
            <Pill tone="bad" title={s.lastError.message}>
              last error: {s.lastError.code}
            </Pill>
          )}
          <span className="mono id-long" title="sandbox id">
            {summary.id}
          </span>
          <CopyButton text={summary.id} label="Copy id" />
        </div>
        <div className="detail-actions">
          <button
            type="button"
            className="btn"
            disabled={!s}
            onClick={() =>
              s && cloneIntoForm(asNewPodConfig(s.config, crypto.randomUUID()), `${summary.metadata.namespace}/${summary.metadata.name}`)
            }
          >
            Clone into form
          </button>
          <PodActions pods={[summary]} compact onRemoved={() => select(undefined)} />
        </div>
      </header>
      <Tabs tabs={tabs} active={tab} onChange={setTab} label="Sandbox detail" />
      <div className="detail-body" role="tabpanel" aria-labelledby={`tab-${tab}`} ref={scrollRef} onScroll={onScroll}>
        {status.isError ? (
          <ErrorView error={status.error} title="Could not read the sandbox status" />
        ) : !s ? (
          <div className="muted pad">Loading status…</div>
        ) : tab === 'overview' ? (
          <>
            <NetworkVerdict s={s} />
            <PodContainers containers={containers} />
            <OverviewTab s={s} />
          </>
        ) : tab === 'containers' ? (
          <ContainersTab pod={s} />
        ) : tab === 'network' ? (
          <NetworkTab s={s} />
        ) : tab === 'reachability' ? (
          s.hostNetwork ? (
            <div className="muted pad">The pod shares the host network: there is no pod network to probe.</div>
          ) : (
            <ReachabilityPanel s={s} />
          )
        ) : tab === 'ports' ? (
          <PortsTab s={s} traced={traced} runtime={runtime} />
        ) : tab === 'bandwidth' ? (
          <BandwidthTab s={s} traced={traced} runtime={runtime} />
        ) : tab === 'trace' ? (
          <TraceTab s={s} available={traced} runtime={runtime} />
        ) : tab === 'lifecycle' ? (
          <LifecycleTab s={s} traced={traced} runtime={runtime} />
        ) : (
          <RawTab s={s} />
        )}
      </div>
    </div>
  );
}
