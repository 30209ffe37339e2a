/**
 * The one way a network list is invoked, for the sandbox runtime (cni-manager.ts) and the CNI lab alike, as libcni's
 * AddNetworkList / CheckNetworkList / DelNetworkList / GetStatusNetworkList: ADD runs the plugins in order chaining
 * prevResult and caches the final result; CHECK runs them in order with the cached final result (lists >= 0.4.0,
 * unless disableCheck); DEL runs them in reverse, each with the cached final result (lists >= 0.4.0) and the
 * capability args the caller passes now; STATUS (lists >= 1.1.0) gets only name and cniVersion. Every plugin's stdin
 * is built by one function (pluginCall), so capability filtering and injection cannot differ between verbs or callers.
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
import type { KnownDefect } from './plugin-failure';
import { buildPluginStdin } from './plugin-stdin';
import { parsePluginResult, parseVersionedResult, resultAsVersion, toV1View, type ParsedResult } from './result-convert';
import { specAtLeast } from './spec-version';

export interface Attachment {
  containerId: string;
  netns: string;
  opts: CniNamespaceOptions;
}

/** Where DEL's prevResult came from, for the trace. */
type PrevResultSource = 'cache' | 'incomplete-add' | 'none' | 'too-old-for-cache' | 'cache-discarded';

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

/** What one plugin exec of a list needs beyond the list itself. */
interface PluginCallInput {
  verb: CniVerb;
  index: number;
  cniEnv: Record<string, string>;
  prevResult?: Record<string, unknown>;
  /** undefined for STATUS, which gets no runtimeConfig */
  capabilityArgs?: Record<string, unknown>;
}

/** One plugin of the list: its stdin (libcni buildOneConfig + injectRuntimeConfig), then the exec, recorded. */
function pluginCall<T>(ctx: ExecContext, net: LoadedNetwork, input: PluginCallInput, read: (stdout: string) => T): Promise<T> {
  const { list } = net;
  const plugin = list.plugins[input.index]!;
  const stdin = buildPluginStdin({
    networkName: list.name,
    cniVersion: list.cniVersion,
    plugin,
    prevResult: input.prevResult,
    capabilityArgs: input.capabilityArgs,
  });
  const pluginName = typeof plugin.raw.name === 'string' ? plugin.raw.name : undefined;
  return execPlugin(
    ctx,
    {
      network: list.name,
      source: net.source,
      ifName: input.verb === 'STATUS' ? '' : net.ifName,
      verb: input.verb,
      index: input.index,
      type: plugin.type,
      pluginName,
      stdin,
      cniEnv: input.cniEnv,
    },
    read,
  );
}

function attachmentEnv(ctx: ExecContext, verb: CniVerb, net: LoadedNetwork, att: Attachment): Record<string, string> {
  return cniEnv({ verb, containerId: att.containerId, netns: att.netns, ifName: net.ifName, args: att.opts.args, binDirs: ctx.binDirs });
}

/** How far an ADD chain got: the last plugin that succeeded and its result in the list's version. */
interface AddProgress {
  last?: { index: number; result: Record<string, unknown> };
  /** the plugin being executed when the chain stopped */
  current: number;
}

/** ADD of every plugin in order, each result converted to the list's version and chained into the next as prevResult. */
async function addPlugins(ctx: ExecContext, net: LoadedNetwork, att: Attachment, progress: AddProgress): Promise<ParsedResult> {
  const { list } = net;
  const env = attachmentEnv(ctx, 'ADD', net, att);
  let final: ParsedResult | undefined;
  for (const index of list.plugins.keys()) {
    progress.current = index;
    const isLast = index === list.plugins.length - 1;
    // converting inside the read step makes a result the list's version cannot carry fail at the plugin that printed it
    let prevResult: Record<string, unknown> | undefined;
    ({ parsed: final, prevResult } = await pluginCall(
      ctx,
      net,
      { verb: 'ADD', index, cniEnv: env, prevResult: progress.last?.result, capabilityArgs: att.opts.capabilities },
      (stdout) => {
        const parsed = parsePluginResult(stdout, list.cniVersion);
        return { parsed, prevResult: isLast ? undefined : resultAsVersion(parsed.result, list.cniVersion || parsed.version) };
      },
    ));
    if (prevResult) progress.last = { index, result: prevResult };
  }
  if (!final) throw cniError(`network ${JSON.stringify(list.name)} has no plugins`, { network: list.name });
  return final;
}

/**
 * After a failed ADD, the result of the chain as far as it got goes to the cache, marked incomplete, so the DEL that
 * must follow gives every plugin the prevResult it would have had: firewall's DEL, for one, removes only the rules
 * for the addresses its prevResult names, and without one it leaves them (libcni caches nothing after a failure;
 * docs/semantics.md#del-after-failed-add). A write that fails is recorded and leaves the DEL as libcni's.
 */
async function cacheIncompleteAdd(
  cache: ResultCache,
  net: LoadedNetwork,
  att: Attachment,
  progress: AddProgress,
  detail: Record<string, unknown>,
): Promise<void> {
  const { list, ifName } = net;
  if (!progress.last) return;
  const incompleteAdd = {
    failedIndex: progress.current,
    failedType: list.plugins[progress.current]?.type ?? '',
    resultIndex: progress.last.index,
    resultType: list.plugins[progress.last.index]!.type,
  };
  try {
    detail.cacheFile = await cache.write({
      networkName: list.name,
      containerId: att.containerId,
      ifName,
      config: list.bytes,
      netns: att.netns,
      cniArgs: att.opts.args,
      capabilityArgs: att.opts.capabilities,
      result: progress.last.result,
      incompleteAdd,
    });
    detail.incompleteAdd = incompleteAdd;
  } catch (e) {
    detail.cacheWriteError = (e as Error).message;
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
    const progress: AddProgress = { current: 0 };
    let final: ParsedResult;
    try {
      final = await addPlugins(ctx, net, att, progress);
    } catch (e) {
      await cacheIncompleteAdd(cache, net, att, progress, detail);
      throw e;
    }
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

/**
 * The cached final ADD result in the list's version (after a failed ADD: the last successful plugin's result); a
 * cache that cannot be used is deleted (libcni does the same).
 */
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
    return { prev: resultAsVersion(parsed.result, net.list.cniVersion), source: cached.incompleteAdd ? 'incomplete-add' : 'cache' };
  } catch (e) {
    await cache.remove(key);
    return { source: 'cache-discarded', reason: (e as Error).message };
  }
}

/** A result the caller read (another runtime's cache entry), in the list's version; nothing is removed on failure. */
function givenPrevResult(
  given: Record<string, unknown> | undefined,
  net: LoadedNetwork,
): { prev?: Record<string, unknown>; source: PrevResultSource; reason?: string } {
  if (!specAtLeast(net.list.cniVersion, '0.4.0')) return { source: 'too-old-for-cache' };
  if (given === undefined) return { source: 'none' };
  try {
    return { prev: resultAsVersion(parseVersionedResult(given).result, net.list.cniVersion), source: 'cache' };
  } catch (e) {
    return { source: 'none', reason: `the cached result cannot be read: ${(e as Error).message} (left as it is)` };
  }
}

/** go-cni Remove skips these: plugins that already cleaned up, or a netns that is already gone. */
export function isIgnorableDelError(e: unknown, netnsPath: string): boolean {
  const message = e instanceof Error ? e.message : String(e);
  return message.includes('not found') || (netnsPath === '' && message.includes('no such file or directory'));
}

function pendingOf(net: LoadedNetwork, index: number, e: unknown): PendingPluginDel {
  const d = e instanceof PodscopeError && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : {};
  return {
    network: net.list.name,
    ifName: net.ifName,
    index,
    type: net.list.plugins[index]!.type,
    message: (e as Error).message,
    ...(d.timedOut === true ? { timedOut: true } : {}),
  };
}

/** DEL of the chosen plugins in reverse order, every one tried; what did not succeed is returned. */
async function delPlugins(
  ctx: ExecContext,
  net: LoadedNetwork,
  att: Attachment,
  prev: Record<string, unknown> | undefined,
  indices?: ReadonlySet<number>,
): Promise<PendingPluginDel[]> {
  const env = attachmentEnv(ctx, 'DEL', net, att);
  const pending: PendingPluginDel[] = [];
  for (let index = net.list.plugins.length - 1; index >= 0; index--) {
    if (indices && !indices.has(index)) continue;
    try {
      await pluginCall(
        ctx,
        net,
        { verb: 'DEL', index, cniEnv: env, prevResult: prev, capabilityArgs: att.opts.capabilities },
        () => undefined,
      );
    } catch (e) {
      if (!isIgnorableDelError(e, att.netns)) pending.push(pendingOf(net, index, e));
    }
  }
  return pending;
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
    const pending = await delPlugins(ctx, net, att, prev, indices);
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

/** STATUS exists from spec 1.1.0 (libcni sends it to nothing older). */
export function statusSupported(cniVersion: string): boolean {
  return specAtLeast(cniVersion, '1.1.0');
}

/** STATUS exists from spec 1.1.0; older lists are ready by definition. Only name and cniVersion are injected. */
export async function statusNetworkList(ctx: ExecContext, net: LoadedNetwork): Promise<void> {
  if (!statusSupported(net.list.cniVersion)) return;
  const env = cniEnv({ verb: 'STATUS', containerId: '', netns: '', ifName: '', args: [], binDirs: ctx.binDirs });
  for (const index of net.list.plugins.keys()) await pluginCall(ctx, net, { verb: 'STATUS', index, cniEnv: env }, () => undefined);
}

/** true for the error checkNetworkList throws for a list older than 0.4.0 (a gate, not a plugin's failure) */
export function isCheckNotSupported(e: unknown): boolean {
  return e instanceof PodscopeError && (e.details as Record<string, unknown> | undefined)?.notSupported === true;
}

/**
 * libcni CheckNetworkList: lists older than 0.4.0 have no CHECK (libcni refuses with this very message); a list
 * with disableCheck skips it; otherwise every plugin runs in order with the cached final ADD result as prevResult
 * (not chained: CHECK prints nothing) and the same env, CNI_ARGS and runtimeConfig as ADD. The first failing plugin
 * ends it, as in libcni — except a failure the plugin-error advice knows as a defect of the installed plugin
 * release (docs/semantics.md#plugin-errors): that one is kept as a warning and the next plugins are still checked,
 * for a pod and in the lab alike (libcni stops there, and would call a healthy network broken).
 */
/** A plugin whose CHECK failed with a known defect of its release: a warning, not the network's failure. */
export interface PluginKnownDefect extends KnownDefect {
  type: string;
  index: number;
}

export interface CheckListOutcome {
  outcome: 'passed' | 'disabled';
  knownDefects: PluginKnownDefect[];
}

function knownDefectOf(e: unknown): KnownDefect | undefined {
  const d = e instanceof PodscopeError ? (e.details as { knownDefect?: KnownDefect } | undefined) : undefined;
  return d?.knownDefect;
}

/**
 * The prevResult a CHECK hands the plugins: the result cache's (an unreadable entry is discarded, as for a pod of
 * this engine), or, for a pod another runtime made, the one given — read by the caller and never removed, since
 * that cache is not ours to change.
 */
export type CheckPrevResult = ResultCache | { given: Record<string, unknown> | undefined };

export async function checkNetworkList(
  ctx: ExecContext,
  cache: CheckPrevResult,
  net: LoadedNetwork,
  att: Attachment,
): Promise<CheckListOutcome> {
  const { list, ifName } = net;
  if (!specAtLeast(list.cniVersion, '0.4.0')) {
    throw cniError(`configuration version ${JSON.stringify(list.cniVersion)} does not support the CHECK command`, {
      network: list.name,
      ifName,
      verb: 'CHECK',
      notSupported: true,
    });
  }
  const knownDefects: PluginKnownDefect[] = [];
  if (list.disableCheck) return { outcome: 'disabled', knownDefects };
  const detail: Record<string, unknown> = {};
  await timed(ctx, 'CHECK', net, detail, async () => {
    checkIdentifiers(net, att.containerId, 'CHECK');
    const { prev, source, reason } =
      'given' in cache ? givenPrevResult(cache.given, net) : await cachedPrevResult(cache, net, att.containerId);
    Object.assign(detail, { prevResult: source, ...(reason ? { cacheProblem: reason } : {}) });
    const env = attachmentEnv(ctx, 'CHECK', net, att);
    for (const index of list.plugins.keys()) {
      try {
        await pluginCall(
          ctx,
          net,
          { verb: 'CHECK', index, cniEnv: env, prevResult: prev, capabilityArgs: att.opts.capabilities },
          () => undefined,
        );
      } catch (e) {
        // a defect of the plugin's release says nothing about the network: the next plugins are still checked
        const defect = knownDefectOf(e);
        if (!defect) throw e;
        knownDefects.push({ type: list.plugins[index]!.type, index, ...defect });
        detail.knownDefects = knownDefects;
      }
    }
  });
  return { outcome: 'passed', knownDefects };
}
