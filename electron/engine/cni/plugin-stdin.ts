/**
 * What one plugin reads on stdin (libcni buildOneConfig + injectRuntimeConfig): its own object from the conf, with the
 * list's name and cniVersion, the previous result when there is one, and runtimeConfig = the capabilities it declares
 * that the runtime supplied. `capabilities` is left in place, as libcni does.
 */
import type { PluginConf } from './conf-list';

/** Capabilities the plugin declares true AND the caller supplied; undefined when that is nothing. */
export function runtimeConfigFor(plugin: PluginConf, capabilityArgs: Record<string, unknown>): Record<string, unknown> | undefined {
  const rc: Record<string, unknown> = {};
  for (const [cap, declared] of Object.entries(plugin.capabilities)) {
    if (declared && Object.prototype.hasOwnProperty.call(capabilityArgs, cap)) rc[cap] = capabilityArgs[cap];
  }
  return Object.keys(rc).length > 0 ? rc : undefined;
}

export interface StdinInput {
  networkName: string;
  cniVersion: string;
  plugin: PluginConf;
  prevResult?: Record<string, unknown>;
  /** undefined for STATUS/GC, which get no runtimeConfig */
  capabilityArgs?: Record<string, unknown>;
}

export function buildPluginStdin(input: StdinInput): string {
  const conf: Record<string, unknown> = { ...input.plugin.raw, name: input.networkName, cniVersion: input.cniVersion };
  if (input.prevResult) conf.prevResult = input.prevResult;
  const rc = input.capabilityArgs && runtimeConfigFor(input.plugin, input.capabilityArgs);
  if (rc) conf.runtimeConfig = rc;
  return JSON.stringify(conf);
}
