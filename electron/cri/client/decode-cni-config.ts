/**
 * containerd's Status verbose "cniconfig" (go-cni GetConfig(): PascalCase ConfigResult with per-network
 * NetworkConfList and per-plugin NetConf + raw Source) ⇒ CniConfigView. Plugin binaries are on the runtime's host,
 * so `binary` stays unknown; the built-in loopback network (no Source) is marked builtin.
 */
import type { CniConfigView, CniNetworkView, CniPluginView } from '../../../shared/domain/cni';

interface GoNetConf {
  Network?: Record<string, unknown> | null;
  Source?: string;
}
interface GoConfList {
  Name?: string;
  CNIVersion?: string;
  DisableCheck?: boolean;
  Plugins?: GoNetConf[] | null;
  Source?: string;
}
interface GoConfigResult {
  PluginDirs?: string[] | null;
  PluginConfDir?: string;
  PluginMaxConfNum?: number;
  Prefix?: string;
  Networks?: Array<{ Config?: GoConfList | null; IFName?: string }> | null;
}

function pluginView(p: GoNetConf): CniPluginView {
  let raw: Record<string, unknown> = p.Network ?? {};
  if (p.Source) {
    try {
      raw = JSON.parse(p.Source) as Record<string, unknown>;
    } catch {
      /* keep the parsed NetConf */
    }
  }
  const caps = (raw.capabilities ?? {}) as Record<string, unknown>;
  return { type: String(raw.type ?? p.Network?.type ?? ''), capabilities: Object.keys(caps).filter((k) => caps[k] === true), raw };
}

export function decodeGoCniConfig(json: string, loadedAt = new Date().toISOString()): CniConfigView {
  const c = JSON.parse(json) as GoConfigResult;
  const networks: CniNetworkView[] = (c.Networks ?? []).map((n) => {
    const list = n.Config ?? {};
    return {
      name: list.Name ?? '',
      cniVersion: list.CNIVersion ?? '',
      ifName: n.IFName ?? '',
      // go-cni keeps the conflist bytes, not the file name, so `source` stays unknown
      builtin: n.IFName === 'lo' && list.Name === 'cni-loopback',
      disableCheck: list.DisableCheck ?? false,
      plugins: (list.Plugins ?? []).map(pluginView),
    };
  });
  const confNetworks = networks.filter((n) => !n.builtin).length;
  return {
    confDir: c.PluginConfDir ?? '',
    binDirs: c.PluginDirs ?? [],
    maxConfNum: c.PluginMaxConfNum ?? 0,
    networks,
    errors: [],
    ready: confNetworks > 0,
    ...(confNetworks === 0 && { notReadyReason: 'cni plugin not initialized' }),
    loadedAt,
  };
}
