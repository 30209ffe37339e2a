/**
 * In-memory CniManager for the sandbox service's unit tests: no exec, no disk. It walks the same plugin order as the
 * real manager (ADD in order, DEL in reverse), emits the same cni.plugin / cni.network records, keeps a simulated
 * result cache, and can be told to fail a given verb at a given plugin position.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { CniConfigView, CniResult } from '../../shared/domain/cni';
import type { CniVerb, NetworkAttachment, PluginCall, PluginRuntimeConfigPreview } from '../../shared/domain/sandbox';
import type {
  CniCallRecord,
  CniHooks,
  CniManager,
  CniNamespaceOptions,
  CniRemoveScope,
  CniSetupResult,
  CniVerbOutcome,
  PendingPluginDel,
} from '../../electron/engine/cni/types';
import { describePendingDels } from '../../electron/engine/cni/cni-manager';
import { cniError, NOT_INITIALIZED } from '../../electron/engine/cni/cni-error';
import { pluginConfFromObject, type PluginConf } from '../../electron/engine/cni/conf-list';
import { createResult } from '../../electron/engine/cni/create-result';
import { cniEnv } from '../../electron/engine/cni/plugin-env';
import { buildPluginStdin, runtimeConfigFor } from '../../electron/engine/cni/plugin-stdin';
import { specAtLeast } from '../../electron/engine/cni/spec-version';

export interface FakeNetwork {
  name: string;
  ifName: string;
  cniVersion: string;
  /** plugin objects as they would appear in the conflist */
  plugins: Array<Record<string, unknown>>;
}

export interface FakeFailure {
  verb: Extract<CniVerb, 'ADD' | 'DEL' | 'STATUS' | 'CHECK'>;
  network: string;
  /** position of the failing plugin in its list */
  index: number;
  /** the plugin's error text; e.g. include "not found" to exercise Remove's tolerance */
  message?: string;
  /** fail only the next matching exec (default: every time) */
  once?: boolean;
  /** the plugin's binary is missing: the exec never starts (its record has no binary) */
  missingBinary?: boolean;
}

export interface FakeCniCall {
  op: 'load' | 'status' | 'setup' | 'remove' | 'check';
  containerId?: string;
  netnsPath?: string;
  opts?: CniNamespaceOptions;
  scope?: CniRemoveScope;
}

export const FAKE_NETWORKS: FakeNetwork[] = [
  { name: 'cni-loopback', ifName: 'lo', cniVersion: '0.3.1', plugins: [{ type: 'loopback' }] },
  {
    name: 'containerd-net',
    ifName: 'eth0',
    cniVersion: '1.0.0',
    plugins: [
      { type: 'bridge', bridge: 'cni0', ipam: { type: 'host-local' } },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  },
];

const BIN_DIR = '/opt/cni/bin';

/** A loopback result for lo and a bridge-like dual-stack result (pod IP on interface 2) for everything else. */
export function defaultFakeResult(network: FakeNetwork, netnsPath: string, seq: number): CniResult {
  if (network.ifName === 'lo') {
    return {
      cniVersion: network.cniVersion,
      interfaces: [{ name: 'lo', mac: '00:00:00:00:00:00', sandbox: netnsPath }],
      ips: [
        { address: '127.0.0.1/8', interface: 0 },
        { address: '::1/128', interface: 0 },
      ],
      dns: {},
    };
  }
  const host = (seq % 250) + 2;
  return {
    cniVersion: network.cniVersion,
    interfaces: [
      { name: 'cni0', mac: '02:00:00:00:00:01' },
      { name: `veth${host.toString(16).padStart(8, '0')}`, mac: '02:00:00:00:01:01' },
      { name: network.ifName, mac: `02:00:00:00:02:${host.toString(16).padStart(2, '0')}`, sandbox: netnsPath },
    ],
    ips: [
      { address: `10.88.0.${host}/16`, gateway: '10.88.0.1', interface: 2 },
      { address: `2001:4860:4860::${host.toString(16)}/64`, gateway: '2001:4860:4860::1', interface: 2 },
    ],
    routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }],
    dns: {},
  };
}

export class FakeCniManager implements CniManager {
  readonly calls: FakeCniCall[] = [];
  /** every simulated plugin exec, in order */
  readonly pluginCalls: PluginCall[] = [];
  failures: FakeFailure[] = [];
  ready = true;
  notReadyReason = NOT_INITIALIZED;
  /** overrides the final result of a network (by name) */
  results: Record<string, (containerId: string, netnsPath: string) => CniResult> = {};
  /** simulated cache: file path → attachment */
  readonly cache = new Map<string, NetworkAttachment>();
  /** problems the conf dir "had" at the last load (an unparseable conflist…); any makes the view not ready */
  loadErrors: Array<{ source: string; message: string }> = [];
  private seq = 0;

  constructor(
    readonly networks: FakeNetwork[] = FAKE_NETWORKS,
    readonly cacheDir = '/var/lib/cni',
    readonly confDir = '/etc/cni/net.d',
  ) {}

  async load(): Promise<CniConfigView> {
    this.calls.push({ op: 'load' });
    return this.configView();
  }

  config(): CniConfigView {
    return this.configView();
  }

  private configView(): CniConfigView {
    const ready = this.ready && this.loadErrors.length === 0;
    return {
      confDir: this.confDir,
      binDirs: [BIN_DIR],
      maxConfNum: 1,
      networks: this.networks.map((n) => ({
        name: n.name,
        cniVersion: n.cniVersion,
        ifName: n.ifName,
        source: n.ifName === 'lo' ? undefined : `${this.confDir}/10-${n.name}.conflist`,
        builtin: n.ifName === 'lo',
        disableCheck: false,
        plugins: n.plugins.map((raw) => {
          const p = pluginConfFromObject(raw);
          return { type: p.type, capabilities: declared(p), raw, binary: path.join(BIN_DIR, p.type) };
        }),
      })),
      errors: structuredClone(this.loadErrors),
      ready,
      notReadyReason: ready ? undefined : this.notReadyReason,
      loadedAt: new Date(0).toISOString(),
    };
  }

  async status(hooks?: CniHooks): Promise<void> {
    this.calls.push({ op: 'status' });
    this.checkReady();
    for (const net of this.networks) {
      net.plugins.forEach((raw, index) => this.exec(hooks, 'STATUS', net, index, pluginConfFromObject(raw), '', '', undefined, undefined));
    }
  }

  async setup(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniSetupResult> {
    this.calls.push({ op: 'setup', containerId, netnsPath, opts });
    this.checkReady();
    const seq = this.seq++;
    const attachments: NetworkAttachment[] = [];
    for (const net of this.networks) {
      attachments.push(
        this.network(hooks, 'ADD', net, () => {
          const final =
            this.results[net.name]?.(containerId, netnsPath) ??
            withEgressIfb(net, containerId, opts, defaultFakeResult(net, netnsPath, seq));
          net.plugins.forEach((raw, index) =>
            this.exec(hooks, 'ADD', net, index, pluginConfFromObject(raw), containerId, netnsPath, opts, index > 0 ? final : undefined),
          );
          const cacheFile = this.cacheFile(net, containerId);
          const attachment: NetworkAttachment = {
            network: net.name,
            ifName: net.ifName,
            source: this.configView().networks.find((v) => v.name === net.name)?.source,
            cniVersion: net.cniVersion,
            result: final,
            capabilityArgs: opts.capabilities,
            cniArgs: opts.args,
            cacheFile,
          };
          this.cache.set(cacheFile, attachment);
          return attachment;
        }),
      );
    }
    return { networks: attachments, ...createResult(attachments.map((a) => a.result!)) };
  }

  async remove(
    containerId: string,
    netnsPath: string,
    opts: CniNamespaceOptions,
    hooks?: CniHooks,
    scope: CniRemoveScope = {},
  ): Promise<void> {
    this.calls.push({ op: 'remove', containerId, netnsPath, opts, scope });
    // the same plan as the real manager: a retry DELs only what is left, an incomplete ADD only what it executed
    const plan = new Map<string, Set<number> | undefined>();
    if (scope.only)
      for (const r of scope.only) plan.set(`${r.network}/${r.ifName}`, new Set([...(plan.get(`${r.network}/${r.ifName}`) ?? []), r.index]));
    else if (scope.executedOnAdd)
      for (const [k, v] of Object.entries(scope.executedOnAdd)) {
        if (v.length) plan.set(k, new Set(v));
      }
    else {
      this.checkReady();
      for (const n of this.networks) plan.set(`${n.name}/${n.ifName}`, undefined);
    }
    const pending: PendingPluginDel[] = [];
    for (const net of this.networks) {
      const k = `${net.name}/${net.ifName}`;
      if (!plan.has(k)) continue;
      const indices = plan.get(k);
      const left: PendingPluginDel[] = [];
      try {
        this.network(hooks, 'DEL', net, () => {
          const cacheFile = this.cacheFile(net, containerId);
          const cached = this.cache.get(cacheFile)?.result;
          for (let index = net.plugins.length - 1; index >= 0; index--) {
            if (indices && !indices.has(index)) continue;
            const plugin = pluginConfFromObject(net.plugins[index]!);
            try {
              this.exec(hooks, 'DEL', net, index, plugin, containerId, netnsPath, opts, cached);
            } catch (e) {
              if ((e as Error).message.includes('not found')) continue;
              left.push({ network: net.name, ifName: net.ifName, index, type: plugin.type, message: (e as Error).message });
            }
          }
          if (left.length) throw cniError(left.map((l) => l.message).join('; '), { pending: left });
          this.cache.delete(cacheFile);
        });
      } catch {
        pending.push(...left);
      }
    }
    if (pending.length) throw cniError(describePendingDels(pending), { pending });
  }

  /** CHECK as the real manager: < 0.4.0 not supported, disableCheck skipped, else every plugin with the cached result */
  async check(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniVerbOutcome[]> {
    this.calls.push({ op: 'check', containerId, netnsPath, opts });
    this.checkReady();
    const out: CniVerbOutcome[] = [];
    for (const net of this.networks) {
      const base = { network: net.name, ifName: net.ifName, cniVersion: net.cniVersion };
      if (!specAtLeast(net.cniVersion, '0.4.0')) {
        out.push({
          ...base,
          outcome: 'notSupported',
          message: `configuration version ${JSON.stringify(net.cniVersion)} does not support the CHECK command`,
        });
        continue;
      }
      try {
        const cached = this.cache.get(this.cacheFile(net, containerId))?.result;
        this.network(hooks, 'CHECK', net, () =>
          net.plugins.forEach((raw, index) =>
            this.exec(hooks, 'CHECK', net, index, pluginConfFromObject(raw), containerId, netnsPath, opts, cached),
          ),
        );
        out.push({ ...base, outcome: 'passed', message: 'every plugin passed CHECK' });
      } catch (e) {
        out.push({ ...base, outcome: 'failed', message: (e as Error).message, error: e });
      }
    }
    return out;
  }

  preview(opts: CniNamespaceOptions): PluginRuntimeConfigPreview[] {
    return this.networks.flatMap((net) =>
      net.plugins.map((raw, index) => {
        const p = pluginConfFromObject(raw);
        return {
          network: net.name,
          ifName: net.ifName,
          type: p.type,
          index,
          capabilities: declared(p),
          runtimeConfig: runtimeConfigFor(p, opts.capabilities),
        };
      }),
    );
  }

  async cachedAttachments(containerId: string): Promise<string[]> {
    return [...this.cache.keys()].filter((f) => f.includes(`-${containerId}-`)).sort();
  }

  private checkReady(): void {
    if (!this.ready || this.loadErrors.length > 0) throw cniError(this.notReadyReason);
  }

  private cacheFile(net: FakeNetwork, containerId: string): string {
    return path.join(this.cacheDir, 'results', `${net.name}-${containerId}-${net.ifName}`);
  }

  private network<T>(hooks: CniHooks | undefined, verb: CniVerb, net: FakeNetwork, body: () => T): T {
    const startedAt = new Date().toISOString();
    const record = (ok: boolean, error?: unknown) =>
      emit(hooks, {
        step: 'cni.network',
        label: `${verb} ${net.name} (${net.ifName})`,
        startedAt,
        durationMs: 0,
        ok,
        ...(error ? { error } : {}),
        detail: { network: net.name, ifName: net.ifName, cniVersion: net.cniVersion, verb },
      });
    try {
      const out = body();
      record(true);
      return out;
    } catch (e) {
      record(false, e);
      throw e;
    }
  }

  private exec(
    hooks: CniHooks | undefined,
    verb: CniVerb,
    net: FakeNetwork,
    index: number,
    plugin: PluginConf,
    containerId: string,
    netnsPath: string,
    opts: CniNamespaceOptions | undefined,
    prevResult: CniResult | undefined,
  ): void {
    hooks?.signal?.throwIfAborted();
    const env = cniEnv({
      verb,
      containerId,
      netns: netnsPath,
      ifName: verb === 'STATUS' ? '' : net.ifName,
      args: opts?.args ?? [],
      binDirs: [BIN_DIR],
    });
    const stdin = buildPluginStdin({
      networkName: net.name,
      cniVersion: net.cniVersion,
      plugin,
      prevResult: prevResult as Record<string, unknown> | undefined,
      capabilityArgs: opts?.capabilities,
    });
    const f = this.takeFailure(verb, net.name, index);
    const failure = f?.missingBinary
      ? `failed to find plugin "${plugin.type}" in path [${BIN_DIR}]`
      : f
        ? (f.message ?? `fake ${verb} failure at ${net.name}[${index}]`)
        : undefined;
    const call: PluginCall = {
      network: net.name,
      ifName: env.CNI_IFNAME!,
      type: plugin.type,
      verb,
      index,
      ...(f?.missingBinary ? {} : { binary: path.join(BIN_DIR, plugin.type) }),
      env,
      stdin,
      stdout: failure && !f?.missingBinary ? JSON.stringify({ code: 999, msg: failure }) : '',
      stderr: '',
      exitCode: failure ? (f?.missingBinary ? null : 1) : 0,
      timedOut: false,
    };
    this.pluginCalls.push(call);
    const error = failure
      ? cniError(
          `plugin type="${plugin.type}" failed (${verb === 'ADD' ? 'add' : verb === 'DEL' ? 'delete' : verb.toLowerCase()}): ${failure}`,
          {
            network: net.name,
            ...(net.ifName === 'lo' ? {} : { conflist: `${this.confDir}/10-${net.name}.conflist` }),
            ifName: net.ifName,
            plugin: plugin.type,
            verb,
            index,
            cniCode: 999,
            cniMsg: failure,
          },
        )
      : undefined;
    emit(hooks, {
      step: 'cni.plugin',
      label: `${verb} ${plugin.type} (${net.name}/${net.ifName})`,
      startedAt: new Date().toISOString(),
      durationMs: 0,
      ok: !error,
      ...(error ? { error } : {}),
      plugin: call,
    });
    if (error) throw error;
  }

  private takeFailure(verb: CniVerb, network: string, index: number): FakeFailure | undefined {
    const i = this.failures.findIndex((f) => f.verb === verb && f.network === network && f.index === index);
    if (i < 0) return undefined;
    const f = this.failures[i]!;
    if (f.once) this.failures.splice(i, 1);
    return f;
  }
}

/**
 * The bandwidth plugin shapes egress on an ifb device it creates and lists that device in its result (host side,
 * no sandbox), so the engine knows which host devices to look at.
 */
function withEgressIfb(net: FakeNetwork, containerId: string, opts: CniNamespaceOptions, result: CniResult): CniResult {
  const shaping = net.plugins.some((p) => p.type === 'bandwidth' && (p.capabilities as Record<string, boolean> | undefined)?.bandwidth);
  const egress = (opts.capabilities.bandwidth as { egressRate?: number } | undefined)?.egressRate;
  if (!shaping || !egress) return result;
  const name = `bwp${createHash('sha1').update(`${net.name}${containerId}`).digest('hex').slice(0, 12)}`;
  return { ...result, interfaces: [...(result.interfaces ?? []), { name, mac: '02:00:00:00:03:01' }] };
}

function declared(p: PluginConf): string[] {
  return Object.keys(p.capabilities).filter((c) => p.capabilities[c]);
}

function emit(hooks: CniHooks | undefined, r: CniCallRecord): void {
  hooks?.record?.(r);
}
