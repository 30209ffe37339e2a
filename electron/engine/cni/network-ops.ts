/**
 * One network list at a time, as libcni's AddNetworkList / DelNetworkList / GetStatusNetworkList:
 * ADD runs the plugins in order chaining prevResult and caches the final result; DEL runs them in reverse, each with
 * the cached final result (lists >= 0.4.0) and the capability args the caller passes now.
 */
import type { CniResult } from '../../../shared/domain/cni';
import type { CniVerb, NetworkAttachment } from '../../../shared/domain/sandbox';
import type { LoadedNetwork } from './conf-dir';
import { PodscopeError } from '../../../shared/domain/errors';
import type { CniNamespaceOptions, PendingPluginDel } from './types';
import type { ResultCache } from './result-cache';
import { cniError } from './cni-error';
import { formatCniError, validateContainerId, validateIfName, validateNetworkName, type CniErrorTriple } from './names';
import { cniEnv } from './plugin-env';
import { execPlugin, type ExecContext } from './plugin-exec';
import { buildPluginStdin } from './plugin-stdin';
import { parsePluginResult, parseVersionedResult, resultAsVersion, toV1View, type ParsedResult } from './result-convert';
import { specAtLeast } from './spec-version';

export interface Attachment {
  containerId: string;
  netns: string;
  opts: CniNamespaceOptions;
}

/** Where DEL's prevResult came from, for the trace. */
type PrevResultSource = 'cache' | 'none' | 'too-old-for-cache' | 'cache-discarded';

function networkRecord(
  ctx: ExecContext,
  verb: CniVerb,
  net: LoadedNetwork,
  t0: number,
  startedAt: Date,
  error: unknown,
  detail: Record<string, unknown>,
): void {
  ctx.record({
    step: 'cni.network',
    label: `${verb} ${net.list.name} (${net.ifName})`,
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - t0,
    ok: error === undefined,
    ...(error !== undefined ? { error } : {}),
    detail: { network: net.list.name, ifName: net.ifName, cniVersion: net.list.cniVersion, verb, ...detail },
  });
}

/** libcni validates these before every ADD exec; a bad id must never reach a plugin or a cache path. */
function checkIdentifiers(net: LoadedNetwork, containerId: string, verb: CniVerb): void {
  const problem: CniErrorTriple | undefined =
    validateContainerId(containerId) ?? validateNetworkName(net.list.name) ?? validateIfName(net.ifName);
  if (problem) {
    throw cniError(`network ${JSON.stringify(net.list.name)} (${net.ifName}) ${verb}: ${formatCniError(problem)}`, {
      network: net.list.name,
      ifName: net.ifName,
      verb,
      cniCode: problem.code,
      cniMsg: problem.msg,
      cniDetails: problem.details,
      invalidArgument: true,
    });
  }
}

async function timed<T>(
  ctx: ExecContext,
  verb: CniVerb,
  net: LoadedNetwork,
  detail: Record<string, unknown>,
  body: () => Promise<T>,
): Promise<T> {
  const startedAt = new Date();
  const t0 = performance.now();
  try {
    const out = await body();
    networkRecord(ctx, verb, net, t0, startedAt, undefined, detail);
    return out;
  } catch (e) {
    networkRecord(ctx, verb, net, t0, startedAt, e, detail);
    throw e;
  }
}

export async function addNetworkList(
  ctx: ExecContext,
  cache: ResultCache,
  net: LoadedNetwork,
  att: Attachment,
): Promise<NetworkAttachment> {
  const { list, ifName } = net;
  const detail: Record<string, unknown> = {};
  return timed(ctx, 'ADD', net, detail, async () => {
    checkIdentifiers(net, att.containerId, 'ADD');
    const env = cniEnv({ verb: 'ADD', containerId: att.containerId, netns: att.netns, ifName, args: att.opts.args, binDirs: ctx.binDirs });
    let prevResult: Record<string, unknown> | undefined;
    let final: ParsedResult | undefined;
    for (const [index, plugin] of list.plugins.entries()) {
      const stdin = buildPluginStdin({
        networkName: list.name,
        cniVersion: list.cniVersion,
        plugin,
        prevResult,
        capabilityArgs: att.opts.capabilities,
      });
      const isLast = index === list.plugins.length - 1;
      const pluginName = typeof plugin.raw.name === 'string' ? plugin.raw.name : undefined;
      // converting inside the read step makes a result the list's version cannot carry fail at the plugin that printed it
      ({ parsed: final, prevResult } = await execPlugin(
        ctx,
        { network: list.name, source: net.source, ifName, verb: 'ADD', index, type: plugin.type, pluginName, stdin, cniEnv: env },
        (stdout) => {
          const parsed = parsePluginResult(stdout, list.cniVersion);
          return { parsed, prevResult: isLast ? undefined : resultAsVersion(parsed.result, list.cniVersion || parsed.version) };
        },
      ));
    }
    if (!final) throw cniError(`network ${JSON.stringify(list.name)} has no plugins`, { network: list.name });
    const key = { networkName: list.name, containerId: att.containerId, ifName };
    let cacheFile: string;
    try {
      cacheFile = await cache.write({
        ...key,
        config: list.bytes,
        netns: att.netns,
        cniArgs: att.opts.args,
        capabilityArgs: att.opts.capabilities,
        result: resultAsVersion(final.result, final.version),
      });
    } catch (e) {
      throw cniError(
        `failed to set network ${JSON.stringify(list.name)} cached result: ${(e as Error).message}`,
        { network: list.name, ifName },
        e,
      );
    }
    detail.cacheFile = cacheFile;
    const result: CniResult = toV1View(final);
    return {
      network: list.name,
      ifName,
      source: net.source,
      cniVersion: list.cniVersion,
      result,
      capabilityArgs: att.opts.capabilities,
      cniArgs: att.opts.args,
      cacheFile,
    };
  });
}

/** The cached final ADD result in the list's version; a cache that cannot be used is deleted (libcni does the same). */
async function cachedPrevResult(
  cache: ResultCache,
  net: LoadedNetwork,
  containerId: string,
): Promise<{ prev?: Record<string, unknown>; source: PrevResultSource; reason?: string }> {
  if (!specAtLeast(net.list.cniVersion, '0.4.0')) return { source: 'too-old-for-cache' };
  const key = { networkName: net.list.name, containerId, ifName: net.ifName };
  const cached = await cache.readResult(key);
  if (cached.state === 'missing') return { source: 'none' };
  try {
    if (cached.state === 'unreadable') throw new Error(cached.reason);
    const parsed = parseVersionedResult(cached.result);
    return { prev: resultAsVersion(parsed.result, net.list.cniVersion), source: 'cache' };
  } catch (e) {
    await cache.remove(key);
    return { source: 'cache-discarded', reason: (e as Error).message };
  }
}

/** go-cni Remove skips these: plugins that already cleaned up, or a netns that is already gone. */
export function isIgnorableDelError(e: unknown, netnsPath: string): boolean {
  const message = e instanceof Error ? e.message : String(e);
  return message.includes('not found') || (netnsPath === '' && message.includes('no such file or directory'));
}

/**
 * DEL of one list, in reverse. libcni stops at the first failing plugin; this one tries every plugin and throws one
 * CniError at the end whose details.pending names each plugin left, because a DEL that stops at (say) a broken
 * portmap never reaches the bridge, and its IPs, veth and ipMasq chain would be stranded. The cache entry is kept
 * while anything is pending: it is the prevResult a retry needs.
 * @param indices the plugins to DEL (default all): after an incomplete ADD, the ones it executed; on a retry, the ones left
 */
export async function delNetworkList(
  ctx: ExecContext,
  cache: ResultCache,
  net: LoadedNetwork,
  att: Attachment,
  indices?: ReadonlySet<number>,
): Promise<void> {
  const { list, ifName } = net;
  const detail: Record<string, unknown> = {};
  await timed(ctx, 'DEL', net, detail, async () => {
    checkIdentifiers(net, att.containerId, 'DEL');
    const { prev, source, reason } = await cachedPrevResult(cache, net, att.containerId);
    Object.assign(detail, { prevResult: source, ...(reason ? { cacheProblem: reason } : {}) });
    if (indices) detail.plugins = [...indices].sort((a, b) => b - a);
    const env = cniEnv({ verb: 'DEL', containerId: att.containerId, netns: att.netns, ifName, args: att.opts.args, binDirs: ctx.binDirs });
    const pending: PendingPluginDel[] = [];
    for (let index = list.plugins.length - 1; index >= 0; index--) {
      if (indices && !indices.has(index)) continue;
      const plugin = list.plugins[index]!;
      const stdin = buildPluginStdin({
        networkName: list.name,
        cniVersion: list.cniVersion,
        plugin,
        prevResult: prev,
        capabilityArgs: att.opts.capabilities,
      });
      const pluginName = typeof plugin.raw.name === 'string' ? plugin.raw.name : undefined;
      try {
        await execPlugin(
          ctx,
          { network: list.name, source: net.source, ifName, verb: 'DEL', index, type: plugin.type, pluginName, stdin, cniEnv: env },
          () => undefined,
        );
      } catch (e) {
        if (isIgnorableDelError(e, att.netns)) continue;
        const d = e instanceof PodscopeError && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : {};
        pending.push({
          network: list.name,
          ifName,
          index,
          type: plugin.type,
          message: (e as Error).message,
          ...(d.timedOut === true ? { timedOut: true } : {}),
        });
      }
    }
    if (pending.length > 0) {
      detail.pending = pending.map((p) => `${p.type}#${p.index}`);
      throw cniError(pending.map((p) => p.message).join('; '), { network: list.name, ifName, pending });
    }
    // libcni ignores a failed cache delete: every plugin released its part, and a stale file only costs a re-DEL
    await cache.remove({ networkName: list.name, containerId: att.containerId, ifName }).catch((e: unknown) => {
      detail.cacheRemoveError = (e as Error).message;
    });
  });
}

/** STATUS exists from spec 1.1.0; older lists are ready by definition. Only name and cniVersion are injected. */
export async function statusNetworkList(ctx: ExecContext, net: LoadedNetwork): Promise<void> {
  const { list } = net;
  if (!specAtLeast(list.cniVersion, '1.1.0')) return;
  const env = cniEnv({ verb: 'STATUS', containerId: '', netns: '', ifName: '', args: [], binDirs: ctx.binDirs });
  for (const [index, plugin] of list.plugins.entries()) {
    const stdin = buildPluginStdin({ networkName: list.name, cniVersion: list.cniVersion, plugin });
    await execPlugin(
      ctx,
      { network: list.name, source: net.source, ifName: '', verb: 'STATUS', index, type: plugin.type, stdin, cniEnv: env },
      () => undefined,
    );
  }
}

/**
 * libcni CheckNetworkList: lists older than 0.4.0 have no CHECK (libcni refuses with this very message); a list
 * with disableCheck skips it; otherwise every plugin runs in order with the cached final ADD result as prevResult
 * (not chained: CHECK prints nothing) and the same env, CNI_ARGS and runtimeConfig as ADD.
 */
export async function checkNetworkList(
  ctx: ExecContext,
  cache: ResultCache,
  net: LoadedNetwork,
  att: Attachment,
): Promise<'passed' | 'disabled'> {
  const { list, ifName } = net;
  if (!specAtLeast(list.cniVersion, '0.4.0')) {
    throw cniError(`configuration version ${JSON.stringify(list.cniVersion)} does not support the CHECK command`, {
      network: list.name,
      ifName,
      verb: 'CHECK',
      notSupported: true,
    });
  }
  if (list.disableCheck) return 'disabled';
  const detail: Record<string, unknown> = {};
  await timed(ctx, 'CHECK', net, detail, async () => {
    checkIdentifiers(net, att.containerId, 'CHECK');
    const { prev, source, reason } = await cachedPrevResult(cache, net, att.containerId);
    Object.assign(detail, { prevResult: source, ...(reason ? { cacheProblem: reason } : {}) });
    const env = cniEnv({
      verb: 'CHECK',
      containerId: att.containerId,
      netns: att.netns,
      ifName,
      args: att.opts.args,
      binDirs: ctx.binDirs,
    });
    for (const [index, plugin] of list.plugins.entries()) {
      const stdin = buildPluginStdin({
        networkName: list.name,
        cniVersion: list.cniVersion,
        plugin,
        prevResult: prev,
        capabilityArgs: att.opts.capabilities,
      });
      const pluginName = typeof plugin.raw.name === 'string' ? plugin.raw.name : undefined;
      await execPlugin(
        ctx,
        { network: list.name, ifName, verb: 'CHECK', index, type: plugin.type, pluginName, stdin, cniEnv: env },
        () => undefined,
      );
    }
  });
  return 'passed';
}
