/**
 * The real CniManager (createCniManager) over the fake plugin exec boundary (fake-cni-plugins.ts), with a temp conf
 * dir holding real conflists, a stub bin dir and a real result cache. What the tests look at is recorded on the way
 * through: the manager calls (`calls`) and every plugin exec as the manager traced it (`pluginCalls`). Faults are
 * injected into the fake plugins (`failures`); readiness and load errors are real conf-dir states (`setReady`,
 * `writeConfFile`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CniConfigView, CniResult } from '../../shared/domain/cni';
import type { PluginCall, PluginRuntimeConfigPreview } from '../../shared/domain/sandbox';
import { createCniManager } from '../../electron/engine/cni/cni-manager';
import type {
  CniHooks,
  CniManager,
  CniNamespaceOptions,
  CniRemoveScope,
  CniSetupResult,
  CniVerbOutcome,
} from '../../electron/engine/cni/types';
import { FakeCniPlugins, type FakeNetwork, type PluginFault } from './fake-cni-plugins';

export type { FakeNetwork, PluginFault as FakeFailure } from './fake-cni-plugins';

export interface FakeCniCall {
  op: 'load' | 'status' | 'statusEach' | 'setup' | 'remove' | 'check';
  containerId?: string;
  netnsPath?: string;
  opts?: CniNamespaceOptions;
  scope?: CniRemoveScope;
}

/** containerd's default: the built-in loopback network and a dual-stack bridge with portmap and bandwidth. */
export const FAKE_NETWORKS: FakeNetwork[] = [
  { name: 'cni-loopback', ifName: 'lo', cniVersion: '0.3.1', plugins: [{ type: 'loopback' }] },
  {
    name: 'containerd-net',
    ifName: 'eth0',
    cniVersion: '1.0.0',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: '10.88.0.0/16' }], [{ subnet: '2001:4860:4860::/64' }]],
          routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  },
];

export interface FakeCniOptions {
  /** holds net.d, bin and cache unless given below */
  dir: string;
  networks?: FakeNetwork[];
  confDir?: string;
  cacheDir?: string;
  maxConfNum?: number;
  defaultPluginTimeoutMs?: number;
}

export class FakeCni implements CniManager {
  readonly calls: FakeCniCall[] = [];
  /** every plugin exec the manager made, as it recorded them */
  readonly pluginCalls: PluginCall[] = [];
  private readonly manager: CniManager;

  constructor(
    readonly plugins: FakeCniPlugins,
    readonly confDir: string,
    readonly cacheDir: string,
    readonly networks: FakeNetwork[],
    opts: { maxConfNum: number; defaultPluginTimeoutMs?: number },
  ) {
    plugins.networks = networks;
    this.manager = createCniManager({
      confDir,
      binDirs: [plugins.binDir],
      cacheDir,
      maxConfNum: opts.maxConfNum,
      runner: plugins,
      env: {},
      defaultPluginTimeoutMs: opts.defaultPluginTimeoutMs,
    });
  }

  /** faults of the fake plugins, by verb, network and plugin position */
  get failures(): PluginFault[] {
    return this.plugins.faults;
  }
  set failures(f: PluginFault[]) {
    this.plugins.faults = f;
  }

  /** the final result a network's main plugin answers ADD with (chained plugins pass it on) */
  get results(): Record<string, (containerId: string, netnsPath: string) => CniResult> {
    return this.plugins.results;
  }

  /** the result cache as files on disk: path → its cniCacheV1 document */
  get cache(): Map<string, unknown> {
    const dir = path.join(this.cacheDir, 'results');
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      /* no cache yet */
    }
    return new Map(names.map((n) => [path.join(dir, n), JSON.parse(readFileSync(path.join(dir, n), 'utf8')) as unknown]));
  }

  /** Writes every conf-dir network (all but the built-in loopback) as `<10+i>-<name>.conflist`. */
  async writeNetworks(): Promise<void> {
    await mkdir(this.confDir, { recursive: true });
    for (const [i, n] of this.networks.filter((n) => n.ifName !== 'lo').entries()) {
      const doc = { cniVersion: n.cniVersion, name: n.name, ...n.extra, plugins: n.plugins };
      await writeFile(path.join(this.confDir, `${10 + i}-${n.name}.conflist`), JSON.stringify(doc, null, 2));
    }
  }

  /** Puts a file in the conf dir (a broken conflist, a second network…) and reloads. */
  async writeConfFile(name: string, text: string): Promise<CniConfigView> {
    await mkdir(this.confDir, { recursive: true });
    await writeFile(path.join(this.confDir, name), text);
    return this.manager.load();
  }

  async removeConfFile(name: string): Promise<CniConfigView> {
    await rm(path.join(this.confDir, name), { force: true });
    return this.manager.load();
  }

  /**
   * Not ready: the conf dir is emptied and reloaded, so the manager answers "cni plugin not initialized" as go-cni
   * does; ready again: the networks are written back and reloaded.
   */
  async setReady(ready: boolean): Promise<void> {
    if (ready) {
      await this.writeNetworks();
    } else {
      await rm(this.confDir, { recursive: true, force: true });
    }
    await this.manager.load();
  }

  load(): Promise<CniConfigView> {
    this.calls.push({ op: 'load' });
    return this.manager.load();
  }

  config(): CniConfigView {
    return this.manager.config();
  }

  status(hooks?: CniHooks): Promise<void> {
    this.calls.push({ op: 'status' });
    return this.manager.status(this.hooks(hooks));
  }

  statusEach(hooks?: CniHooks): Promise<CniVerbOutcome[]> {
    this.calls.push({ op: 'statusEach' });
    return this.manager.statusEach!(this.hooks(hooks));
  }

  check(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniVerbOutcome[]> {
    this.calls.push({ op: 'check', containerId, netnsPath, opts });
    return this.manager.check!(containerId, netnsPath, opts, this.hooks(hooks));
  }

  setup(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniSetupResult> {
    this.calls.push({ op: 'setup', containerId, netnsPath, opts });
    return this.manager.setup(containerId, netnsPath, opts, this.hooks(hooks));
  }

  remove(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks, scope?: CniRemoveScope): Promise<void> {
    this.calls.push({ op: 'remove', containerId, netnsPath, opts, scope });
    return this.manager.remove(containerId, netnsPath, opts, this.hooks(hooks), scope);
  }

  preview(opts: CniNamespaceOptions): PluginRuntimeConfigPreview[] {
    return this.manager.preview(opts);
  }

  cachedAttachments(containerId: string): Promise<string[]> {
    return this.manager.cachedAttachments(containerId);
  }

  private hooks(hooks: CniHooks | undefined): CniHooks {
    return {
      ...hooks,
      record: (r) => {
        if (r.plugin) this.pluginCalls.push(r.plugin);
        hooks?.record?.(r);
      },
    };
  }
}

/** A FakeCni with its conflists written and its plugin stubs installed; the engine's start() loads it. */
export async function createFakeCni(opts: FakeCniOptions): Promise<FakeCni> {
  const plugins = new FakeCniPlugins(path.join(opts.dir, 'cni-bin'));
  await plugins.install();
  const cni = new FakeCni(
    plugins,
    opts.confDir ?? path.join(opts.dir, 'net.d'),
    opts.cacheDir ?? path.join(opts.dir, 'cni-cache'),
    structuredClone(opts.networks ?? FAKE_NETWORKS),
    { maxConfNum: opts.maxConfNum ?? 1, defaultPluginTimeoutMs: opts.defaultPluginTimeoutMs },
  );
  await cni.writeNetworks();
  return cni;
}
