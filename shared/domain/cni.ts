/** CNI shapes that cross into the UI and the CRI verbose info (CNI SPEC 1.x result, normalised). */
export interface CniInterface {
  name: string;
  mac?: string;
  sandbox?: string;
  mtu?: number;
  socketPath?: string;
  pciID?: string;
}
export interface CniIpConfig {
  address: string;
  gateway?: string;
  interface?: number;
}
export interface CniRoute {
  dst: string;
  gw?: string;
  mtu?: number;
  advmss?: number;
  priority?: number;
  table?: number;
  scope?: number;
}
export interface CniDns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}
/** A result converted to 1.x shape whatever the plugin printed (0.3.x / 0.4.0 / 1.x). */
export interface CniResult {
  cniVersion: string;
  interfaces?: CniInterface[];
  ips?: CniIpConfig[];
  routes?: CniRoute[];
  dns?: CniDns;
}

export interface CniPluginView {
  type: string;
  /** capabilities the plugin declares true in its conf */
  capabilities: string[];
  /** the plugin object as written in the file */
  raw: Record<string, unknown>;
  /** absolute path of the binary found in the bin dirs, or undefined when it is missing */
  binary?: string;
}

export interface CniNetworkView {
  name: string;
  cniVersion: string;
  ifName: string;
  /** file it was loaded from; undefined for the built-in loopback network */
  source?: string;
  builtin: boolean;
  disableCheck: boolean;
  plugins: CniPluginView[];
}

export interface CniConfigView {
  confDir: string;
  binDirs: string[];
  maxConfNum: number;
  networks: CniNetworkView[];
  /** load problems, one per file or one for the whole dir */
  errors: Array<{ source: string; message: string }>;
  ready: boolean;
  /** why the network is not ready, as go-cni says it (e.g. "cni plugin not initialized") */
  notReadyReason?: string;
  /**
   * conf-dir files that were not loaded although the dir loaded: beyond max networks (go-cni stops reading after
   * max_conf_num networks, so a broken file sorted after them is never read either), with the reason
   */
  skipped?: Array<{ source: string; reason: string }>;
  /** plugins of loaded networks whose binary is in none of the bin dirs: every ADD through them would fail */
  missingPlugins?: MissingPlugin[];
  loadedAt: string;
}

export interface MissingPlugin {
  network: string;
  /** the conflist file; undefined for the built-in loopback network */
  source?: string;
  type: string;
  index: number;
}

/** "plugin "X" (network "N", file F): not found in bin dirs [..]", said the same way by the engine, CRI and the UI */
export function missingPluginText(m: MissingPlugin, binDirs: string[]): string {
  return `plugin "${m.type}" (network "${m.network}", file ${m.source ?? 'built-in'}): not found in bin dirs [${binDirs.join(' ')}]`;
}

/** the plugins of the loaded networks that have no binary, from a view */
export function missingPluginsOf(view: Pick<CniConfigView, 'networks'>): MissingPlugin[] {
  return view.networks.flatMap((n) =>
    n.plugins.flatMap((p, index) => (p.binary ? [] : [{ network: n.name, source: n.source, type: p.type, index }])),
  );
}

/** go-cni's per-interface view built from all network results (createResult, docs/semantics.md#cni-results). */
export interface InterfaceConfig {
  mac?: string;
  sandbox?: string;
  ipConfigs: Array<{ ip: string; gateway?: string }>;
}

/** host-local's default dataDir (its disk store; a conflist's `ipam.dataDir` overrides it) */
export const HOST_LOCAL_DEFAULT_DATA_DIR = '/var/lib/cni/networks';

/** Where a network's host-local reservations live on disk: one file per reserved address. */
export interface HostLocalDir {
  network: string;
  /** the plugin (of the list) whose ipam is host-local */
  plugin: string;
  /** `<dataDir>/<network name>`: host-local keys its store by the network's name, not by the engine's state dir */
  dir: string;
  /** true when the conflist sets no dataDir and host-local's own default applies */
  defaulted: boolean;
}

/** Every host-local store the loaded networks write to (the engine's --state-dir does not move them). */
export function hostLocalDirs(networks: CniNetworkView[]): HostLocalDir[] {
  const out: HostLocalDir[] = [];
  for (const n of networks)
    for (const p of n.plugins) {
      const ipam = p.raw.ipam as { type?: unknown; dataDir?: unknown } | undefined;
      if (ipam?.type !== 'host-local') continue;
      const own = typeof ipam.dataDir === 'string' && ipam.dataDir !== '' ? ipam.dataDir.replace(/\/+$/, '') : undefined;
      out.push({ network: n.name, plugin: p.type, dir: `${own ?? HOST_LOCAL_DEFAULT_DATA_DIR}/${n.name}`, defaulted: own === undefined });
    }
  return out;
}
