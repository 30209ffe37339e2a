/**
 * What a run would do with this config, without acquiring anything: the plugins ADD would call (and the first whose
 * binary is missing), port mappings, bandwidth, CNI args, host-port clashes with running pods, and every error the
 * run would refuse the config for.
 */
import { missingPluginText } from '../../../shared/domain/cni';
import { formatIssues, isHostNetwork } from '../../../shared/domain/config';
import { RunPodSandboxConfigSchema } from '../../../shared/domain/config-checks';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { analyzePortMappings, toCniPortMappings } from '../../../shared/domain/portmap';
import { conflictsForNewMappings } from '../../../shared/domain/probe';
import type { ConfigPreview, RunSandboxRequest } from '../../../shared/domain/sandbox';
import { buildCniOptions } from './cni-options';
import type { PodsContext } from './context';
import { hostPortHolders } from './host-ports';
import { hostIpFamilyIssues, parseRunConfig } from './run';

export function previewSandbox(ctx: PodsContext, req: RunSandboxRequest): ConfigPreview {
  const config = parseRunConfig(req.config, { checks: false });
  const hostNetwork = isHostNetwork(config);
  const preview: ConfigPreview = {
    hostNetwork,
    plugins: [],
    portMappings: analyzePortMappings(config.port_mappings),
    bandwidth: analyzeBandwidth(config.annotations),
    cniArgs: [],
    errors: [],
    hostPortConflicts: [],
  };
  // what run would refuse before acquiring anything (NUL bytes, a host_ip that is no IP, malformed sysctls, …)
  const checked = RunPodSandboxConfigSchema.safeParse(config);
  if (!checked.success) preview.errors.push(...formatIssues(checked.error));
  if (!hostNetwork) preview.errors.push(...hostIpFamilyIssues(ctx, config));
  if (hostNetwork) return preview;
  preview.hostPortConflicts = conflictsForNewMappings(toCniPortMappings(config.port_mappings), hostPortHolders(ctx));
  try {
    const opts = buildCniOptions('<sandbox-id>', config);
    preview.cniArgs = opts.args;
    preview.plugins = ctx.cni.preview(opts);
    // the first plugin without a binary is where ADD would stop (plugins run in order, networks all at once)
    const missing = preview.plugins.find((p) => p.binaryFound === false);
    if (missing) {
      const where = { network: missing.network, source: missing.source, type: missing.type, index: missing.index };
      preview.errors.push(`this run would fail at ${missingPluginText(where, ctx.options.cniBinDirs)}`);
    }
  } catch (e) {
    preview.errors.push((e as Error).message);
  }
  return preview;
}
