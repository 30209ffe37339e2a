/**
 * The CniManager behind createCniManager: go-cni's libcni struct in TypeScript. It owns the loaded networks, the
 * result cache and the exec context; the per-list protocol (shared with the CNI lab) lives in network-ops.ts.
 */
import { readFile } from 'node:fs/promises';
import { missingPluginText, type CniConfigView } from '../../../shared/domain/cni';
import { resolvePluginBinary } from './plugin-path';
import type { NetworkAttachment, PluginRuntimeConfigPreview } from '../../../shared/domain/sandbox';
import { PodscopeError } from '../../../shared/domain/errors';
import { NodeProcessRunner, type ProcessRunner } from '../os/exec';
import type { CniHooks, CniManager, CniNamespaceOptions, CniRemoveScope, CniSetupResult, CniVerbOutcome, PendingPluginDel } from './types';
import { cniError, NOT_INITIALIZED } from './cni-error';
import { loadNetworks, siblingPlugins, type LoadedNetwork } from './conf-dir';
import { confListFromBytes, type NetworkConfList } from './conf-list';
import { createResult } from './create-result';
import {
  addNetworkList,
  checkNetworkList,
  delNetworkList,
  isCheckNotSupported,
  isIgnorableDelError,
  statusNetworkList,
  statusSupported,
  type Attachment,
  type CheckPrevResult,
} from './network-ops';
import { CURRENT_SPEC_VERSION } from './spec-version';
import { execContextFor, execPlugin, type ExecContext } from './plugin-exec';
import { DEFAULT_MAX_NETFILTER_PLUGIN_EXECS } from '../common/options';
import { NetfilterGate } from './netfilter-gate';
import { runtimeConfigFor } from './plugin-stdin';
import { ResultCache } from './result-cache';

export interface CniManagerOptions {
  confDir: string;
  binDirs: string[];
  /** libcni cache dir; results go to <cacheDir>/results */
  cacheDir: string;
  /** conf-dir networks to attach; 0 = all (go-cni default is 1) */
  maxConfNum: number;
  runner?: ProcessRunner;
  /** environment the CNI_* variables are added to (default: the engine's own) */
  env?: NodeJS.ProcessEnv;
  /** per-exec timeout when the hooks give none */
  defaultPluginTimeoutMs?: number;
  /** portmap/firewall execs at once across every sandbox (default DEFAULT_MAX_NETFILTER_PLUGIN_EXECS; 0 = no bound) */
  maxNetfilterPluginExecs?: number;
}

const DEFAULT_PLUGIN_TIMEOUT_MS = 60_000;

class LibcniManager implements CniManager {
  private networks: LoadedNetwork[] = [];
  private view: CniConfigView;
  private readonly runner: ProcessRunner;
  private readonly cache: ResultCache;
  private readonly netfilterGate: NetfilterGate;

  constructor(private readonly opts: CniManagerOptions) {
    this.runner = opts.runner ?? new NodeProcessRunner();
    this.cache = new ResultCache(opts.cacheDir);
    this.netfilterGate = new NetfilterGate(opts.maxNetfilterPluginExecs ?? DEFAULT_MAX_NETFILTER_PLUGIN_EXECS);
    this.view = {
      confDir: opts.confDir,
      binDirs: opts.binDirs,
      maxConfNum: opts.maxConfNum,
      networks: [],
      errors: [],
      ready: false,
      notReadyReason: NOT_INITIALIZED,
      loadedAt: '',
    };
  }

  /** the load in flight: loads run one after another, so the last one applied is the one that read the newest files */
  private loading: Promise<CniConfigView> | undefined;

  load(): Promise<CniConfigView> {
    const next = (this.loading ?? Promise.resolve()).catch(() => undefined).then(() => this.loadNow());
    this.loading = next;
    return next;
  }

  private async loadNow(): Promise<CniConfigView> {
    try {
      const outcome = await loadNetworks(this.opts);
      this.networks = outcome.networks;
      this.view = outcome.view;
    } catch (e) {
      // load() promises never to throw; an unexpected failure still leaves a not-ready view behind
      this.networks = [];
      this.view = {
        ...this.view,
        networks: [],
        ready: false,
        notReadyReason: NOT_INITIALIZED,
        errors: [{ source: this.opts.confDir, message: (e as Error).message }],
        loadedAt: new Date().toISOString(),
      };
    }
    return this.view;
  }

  config(): CniConfigView {
    return this.view;
  }

  /**
   * go-cni's Status (ready, then STATUS for lists >= 1.1.0), plus one check of ours first: a loaded network whose
   * plugin binary is in no bin dir makes every ADD fail, so the network is not ready (a 1.1.0 list's STATUS would
   * fail the same way in containerd; docs/semantics.md#network-ready). Binaries are looked up again here, so
   * installing the plugin makes the network ready without a conf-dir reload.
   */
  async status(hooks?: CniHooks): Promise<void> {
    const networks = this.readyNetworks();
    for (const net of networks) {
      for (const [index, plugin] of net.list.plugins.entries()) {
        if (await resolvePluginBinary(plugin.type, this.opts.binDirs)) continue;
        const missing = { network: net.list.name, source: net.source, type: plugin.type, index };
        throw cniError(missingPluginText(missing, this.opts.binDirs), { ...missing, binDirs: this.opts.binDirs });
      }
    }
    const ctx = this.execContext(hooks);
    for (const net of networks) await statusNetworkList(ctx, net);
  }

  async check(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniVerbOutcome[]> {
    const networks = this.readyNetworks();
    const ctx = this.execContext(hooks);
    const att: Attachment = { containerId, netns: netnsPath, opts };
    const out: CniVerbOutcome[] = [];
    for (const net of networks) out.push(await checkOutcome(ctx, this.cache, net, att));
    return out;
  }

  async statusEach(hooks?: CniHooks): Promise<CniVerbOutcome[]> {
    const networks = this.readyNetworks();
    const ctx = this.execContext(hooks);
    const out: CniVerbOutcome[] = [];
    for (const net of networks) out.push(await statusOutcome(ctx, net));
    return out;
  }

  async setup(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniSetupResult> {
    const networks = this.readyNetworks();
    const ctx = this.execContext(hooks);
    const att: Attachment = { containerId, netns: netnsPath, opts };
    // go-cni attaches all networks concurrently, waits for every one, and reports the first error to arrive
    const failures: unknown[] = [];
    const attached = await Promise.all(
      networks.map((net) =>
        addNetworkList(ctx, this.cache, net, att).catch((e: unknown) => {
          failures.push(e);
          return undefined;
        }),
      ),
    );
    if (failures.length > 0) throw failures[0];
    const done = attached as NetworkAttachment[];
    try {
      return { networks: done, ...createResult(done.map((a) => a.result!)) };
    } catch (e) {
      throw cniError((e as Error).message, { containerId });
    }
  }

  async remove(
    containerId: string,
    netnsPath: string,
    opts: CniNamespaceOptions,
    hooks?: CniHooks,
    scope: CniRemoveScope = {},
  ): Promise<void> {
    const loaded = this.view.ready ? this.networks : [];
    // Attachments whose network is no longer loaded (conf dir edited or emptied since ADD) are deleted with the
    // conflist they were added with, which the cache keeps — as libcni's GC does — so an edit never leaks an IP.
    const orphaned = await this.cachedNetworksMissingFrom(containerId, loaded);
    if (!scope.only && !scope.executedOnAdd && loaded.length === 0 && orphaned.length === 0) this.readyNetworks(); // throws go-cni's not-ready error
    const { planned, pending, unknown } = planDels([...loaded, ...orphaned], scope);
    const ctx = this.execContext(hooks);
    const att: Attachment = { containerId, netns: netnsPath, opts };
    // Networks are independent of one another (each DELs its own interface and what its plugins hold, with the same
    // input either way), so they are released at once rather than one after the other as go-cni's Remove does: a
    // stop waits for the slowest network, not the sum (the loopback DEL no longer sits in front of the bridge's).
    // Within a network the plugins still run in reverse order. What is left is reported in network order.
    const outcomes = await Promise.allSettled(planned.map(({ net, indices }) => delNetworkList(ctx, this.cache, net, att, indices)));
    const firstOther = collectPending(planned, outcomes, netnsPath, pending);
    // executed on ADD, but the network is gone from both the conf dir and the cache
    for (const k of unknown) {
      pending.push({
        network: k.slice(0, k.lastIndexOf('/')),
        ifName: k.slice(k.lastIndexOf('/') + 1),
        index: -1,
        type: '',
        message: `network ${k} is neither loaded from the conf dir nor in the CNI cache`,
      });
    }
    if (pending.length > 0) {
      const networks = new Set(pending.map((p) => `${p.network}/${p.ifName}`));
      const one = networks.size === 1 ? { network: pending[0]!.network, ifName: pending[0]!.ifName } : {};
      throw cniError(describePendingDels(pending), { ...one, pending }, firstOther);
    }
  }

  private async cachedNetworksMissingFrom(containerId: string, loaded: LoadedNetwork[]): Promise<LoadedNetwork[]> {
    const have = new Set(loaded.map((n) => `${n.list.name}/${n.ifName}`));
    const out: LoadedNetwork[] = [];
    for (const file of await this.cache.attachments(containerId)) {
      let doc: { networkName: string; ifName: string; config: string };
      let list: NetworkConfList;
      try {
        doc = JSON.parse(await readFile(file, 'utf8')) as typeof doc;
        if (have.has(`${doc.networkName}/${doc.ifName}`)) continue;
        list = confListFromBytes(Buffer.from(doc.config, 'base64'));
      } catch {
        continue; // an unusable cache entry cannot tell which plugins to run; libcni skips it too
      }
      // The cache keeps the conflist file's bytes, not the plugins libcni added from <confdir>/<network>/*.conf:
      // take those from the conf dir if they are still there.
      if (!list.loadOnlyInlinedPlugins) list.plugins.push(...(await siblingPlugins(this.opts.confDir, list.name).catch(() => [])));
      if (list.plugins.length === 0) {
        // a DEL that runs nothing would still drop the cache file and so leak what the plugins hold: refuse
        throw cniError(
          `cannot release ${doc.networkName}/${doc.ifName} of ${containerId}: its conflist left the conf dir and the cached copy (${file}) names no plugin; restore the conflist and stop again`,
          { cacheFile: file },
        );
      }
      out.push({ list, ifName: doc.ifName, source: file, builtin: false, binaries: [] });
    }
    return out;
  }

  preview(opts: CniNamespaceOptions): PluginRuntimeConfigPreview[] {
    return this.networks.flatMap((net) =>
      net.list.plugins.map((plugin, index) => ({
        network: net.list.name,
        ifName: net.ifName,
        ...(net.source ? { source: net.source } : {}),
        binaryFound: net.binaries[index] !== undefined,
        type: plugin.type,
        index,
        capabilities: Object.keys(plugin.capabilities).filter((c) => plugin.capabilities[c]),
        runtimeConfig: runtimeConfigFor(plugin, opts.capabilities),
      })),
    );
  }

  netfilterQueue(): { running: number; waiting: number } {
    return this.netfilterGate.queue();
  }

  cachedAttachments(containerId: string): Promise<string[]> {
    return this.cache.attachments(containerId);
  }

  /** go-cni ready(): every operation refuses to run until lo and at least one conf-dir network are loaded. */
  private readyNetworks(): LoadedNetwork[] {
    if (!this.view.ready) throw cniError(this.view.notReadyReason ?? NOT_INITIALIZED, { errors: this.view.errors });
    return this.networks;
  }

  private execContext(hooks?: CniHooks): ExecContext {
    const defaultTimeoutMs = this.opts.defaultPluginTimeoutMs ?? DEFAULT_PLUGIN_TIMEOUT_MS;
    return execContextFor(
      {
        runner: this.runner,
        binDirs: this.opts.binDirs,
        baseEnv: this.opts.env ?? process.env,
        defaultTimeoutMs,
        netfilterGate: this.netfilterGate,
      },
      hooks,
    );
  }
}

/** One network's CHECK as the report says it: passed, disabled, not supported by its version, or failed. */
/**
 * STATUS of one network list as one outcome — for the engine's own networks and for another runtime's cached lists
 * alike: notSupported for a list older than 1.1.0, or for a plugin that says (CNI VERSION) it does not speak the
 * list's version.
 */
export async function statusOutcome(ctx: ExecContext, net: LoadedNetwork): Promise<CniVerbOutcome> {
  const base = { network: net.list.name, ifName: net.ifName, cniVersion: net.list.cniVersion };
  if (!statusSupported(net.list.cniVersion)) {
    return {
      ...base,
      outcome: 'notSupported',
      message: `STATUS is not supported by version ${net.list.cniVersion} (it exists from 1.1.0)`,
    };
  }
  try {
    await statusNetworkList(ctx, net);
    return { ...base, outcome: 'passed', message: 'every plugin reported ready' };
  } catch (e) {
    // a plugin built before spec 1.1.0 fails STATUS ("missing containerID"): ask it which versions it speaks,
    // so "this plugin has no STATUS" is told apart from "this plugin says the network is not ready"
    const type = e instanceof PodscopeError ? (e.details as { plugin?: string } | undefined)?.plugin : undefined;
    const supported = type ? await supportedVersions(ctx, net.list.name, type) : undefined;
    if (supported && !supported.includes(net.list.cniVersion)) {
      return {
        ...base,
        outcome: 'notSupported',
        message: `plugin ${type} supports spec versions ${supported.join(', ')}: it has no STATUS for this ${net.list.cniVersion} list (libcni, and so containerd, would report the network not ready: ${(e as Error).message})`,
      };
    }
    return { ...base, outcome: 'failed', message: (e as Error).message, error: e };
  }
}

/** CNI VERSION of one plugin (recorded like every exec); undefined when it cannot say. */
async function supportedVersions(ctx: ExecContext, network: string, type: string): Promise<string[] | undefined> {
  const env = { CNI_COMMAND: 'VERSION', CNI_PATH: ctx.binDirs.join(':') };
  return execPlugin(
    ctx,
    { network, ifName: '', verb: 'VERSION', index: 0, type, stdin: JSON.stringify({ cniVersion: CURRENT_SPEC_VERSION }), cniEnv: env },
    (stdout) => {
      const doc = JSON.parse(stdout) as { supportedVersions?: unknown };
      return Array.isArray(doc.supportedVersions) ? doc.supportedVersions.map(String) : undefined;
    },
  ).catch(() => undefined);
}

export async function checkOutcome(ctx: ExecContext, cache: CheckPrevResult, net: LoadedNetwork, att: Attachment): Promise<CniVerbOutcome> {
  const base = { network: net.list.name, ifName: net.ifName, cniVersion: net.list.cniVersion };
  try {
    const r = await checkNetworkList(ctx, cache, net, att);
    const defect = r.knownDefects[0];
    return {
      ...base,
      outcome: r.outcome,
      message:
        r.outcome === 'disabled'
          ? 'disableCheck is set in the conflist: CHECK skipped'
          : defect
            ? `every plugin passed CHECK but ${r.knownDefects.map((d) => `${d.type}#${d.index}`).join(', ')}, whose CHECK failed with a known defect of the installed release: ${r.knownDefects.map((d) => `${d.type} ${d.version} (${d.reference}): ${d.explanation}`).join('; ')}`
            : 'every plugin passed CHECK',
      ...(defect ? { knownDefect: defect } : {}),
    };
  } catch (e) {
    const notSupported = isCheckNotSupported(e);
    return {
      ...base,
      outcome: notSupported ? 'notSupported' : 'failed',
      message: (e as Error).message,
      ...(notSupported ? {} : { error: e }),
    };
  }
}

const networkKey = (network: string, ifName: string) => `${network}/${ifName}`;

interface PlannedDel {
  net: LoadedNetwork;
  /** the plugins to DEL; undefined = all */
  indices?: Set<number>;
}

/**
 * Which plugins of which network a DEL runs (in network order), what the scope names that no network here has
 * (pending at once), and the `executedOnAdd` keys that match no network (reported after the DELs).
 */
function planDels(all: LoadedNetwork[], scope: CniRemoveScope): { planned: PlannedDel[]; pending: PendingPluginDel[]; unknown: string[] } {
  // a network absent from the plan is skipped
  const plan = new Map<string, Set<number> | undefined>();
  const pending: PendingPluginDel[] = [];
  if (scope.only) {
    for (const ref of scope.only) {
      const k = networkKey(ref.network, ref.ifName);
      if (!all.some((n) => networkKey(n.list.name, n.ifName) === k)) {
        pending.push({
          ...ref,
          message: `network ${JSON.stringify(ref.network)} (${ref.ifName}) is neither loaded from the conf dir nor in the CNI cache: restore its conflist to release what ${ref.type} holds`,
        });
        continue;
      }
      plan.set(k, (plan.get(k) ?? new Set<number>()).add(ref.index));
    }
  } else if (scope.executedOnAdd) {
    for (const [k, indices] of Object.entries(scope.executedOnAdd)) if (indices.length > 0) plan.set(k, new Set(indices));
  } else {
    for (const n of all) plan.set(networkKey(n.list.name, n.ifName), undefined);
  }
  const planned = all.flatMap((net) => {
    const k = networkKey(net.list.name, net.ifName);
    if (!plan.has(k)) return [];
    const indices = plan.get(k);
    plan.delete(k);
    return [{ net, indices }];
  });
  return { planned, pending, unknown: [...plan.keys()] };
}

/** Adds what each network's DEL left to `pending`; returns the first failure that was not a plugin's (e.g. a bad identifier). */
function collectPending(
  planned: PlannedDel[],
  outcomes: PromiseSettledResult<void>[],
  netnsPath: string,
  pending: PendingPluginDel[],
): unknown {
  let firstOther: unknown;
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') continue;
    const e: unknown = outcome.reason;
    const { net, indices } = planned[i]!;
    const details = e instanceof PodscopeError && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : {};
    if (Array.isArray(details.pending)) {
      pending.push(...(details.pending as PendingPluginDel[]));
      continue;
    }
    if (isIgnorableDelError(e, netnsPath)) continue;
    // not a plugin's failure: every planned plugin of this network is left
    const list = net.list.plugins.map((p, index) => ({ network: net.list.name, ifName: net.ifName, index, type: p.type }));
    pending.push(...list.filter((p) => !indices || indices.has(p.index)).map((p) => ({ ...p, message: (e as Error).message })));
    firstOther ??= e;
  }
  return firstOther;
}

/** go-cni's wording per network ("failed to remove network "n" (eth0): …"), every network that has plugins left. */
export function describePendingDels(pending: PendingPluginDel[]): string {
  const byNetwork = new Map<string, string[]>();
  for (const p of pending) {
    const k = `network ${JSON.stringify(p.network)} (${p.ifName})`;
    byNetwork.set(k, [...(byNetwork.get(k) ?? []), p.message]);
  }
  return [...byNetwork].map(([k, messages]) => `failed to remove ${k}: ${messages.join('; ')}`).join('; ');
}

export function createCniManager(opts: CniManagerOptions): CniManager {
  return new LibcniManager(opts);
}
