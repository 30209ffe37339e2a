/**
 * What firewall, tuning, sbr and host-device did to this pod, as the kernel has it now: each effect with its owner
 * (plugin, network, interface), where it comes from (read from the kernel at the panel's time, or the config only)
 * and whether it is what the config asked for. Shown only for pods whose ADD ran one of those plugins.
 */
import { EFFECT_PLUGINS, type LivePluginEffect } from '../../../../../../shared/domain/live';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { Pill } from '../../../../lib/ui/StatusPill';
import { LivePanel } from './LivePanel';

export function ranEffectPlugins(s: SandboxStatus): string[] {
  const types = s.trace
    .filter((t) => t.step === 'cni.plugin' && t.plugin?.verb === 'ADD' && (EFFECT_PLUGINS as readonly string[]).includes(t.plugin.type))
    .map((t) => t.plugin!.type);
  return [...new Set(types)];
}

function EffectRow({ e }: { e: LivePluginEffect }) {
  return (
    <tr data-testid="plugin-effect" data-plugin={e.plugin}>
      <td>
        <Pill tone={e.matches === false ? 'bad' : e.matches ? 'ok' : 'muted'}>{e.plugin}</Pill>
      </td>
      <td className="mono small muted">
        {e.network}/{e.ifName}
      </td>
      <td className="mono small muted">{e.kind}</td>
      <td className="mono small">{e.what}</td>
      <td className="small">
        {e.source === 'kernel' ? (
          <span className="muted">kernel{e.matches === undefined ? '' : e.matches ? ', as asked' : ''}</span>
        ) : (
          <span className="text-warn" title="derived from the plugin's config, not read from the kernel">
            config only
          </span>
        )}
        {e.matches === false && <span className="text-bad"> not as asked</span>}
        {e.note && <div className="muted small">{e.note}</div>}
      </td>
    </tr>
  );
}

export function PluginEffects({ s }: { s: SandboxStatus }) {
  const plugins = ranEffectPlugins(s);
  if (plugins.length === 0) return null;
  return (
    <LivePanel
      id={s.id}
      testId="plugin-effects"
      title="Plugin effects"
      subtitle={<>What {plugins.join(', ')} did to this pod beyond the CNI result: rules, sysctls, policy routing, moved links.</>}
    >
      {(view) =>
        (view.pluginEffects ?? []).length === 0 ? (
          <div className="muted small">No effect read.</div>
        ) : (
          <table className="table">
            <tbody>
              {view.pluginEffects!.map((e, n) => (
                <EffectRow key={n} e={e} />
              ))}
            </tbody>
          </table>
        )
      }
    </LivePanel>
  );
}
