/**
 * go-cni's Load(WithLoNetwork, WithDefaultConf): the built-in loopback network on `lo`, then conf-dir networks on
 * eth0, eth1, … (libcni conf.go for the file formats). An invalid file inside the window fails the load and leaves
 * only the loopback network, so the manager reports "cni plugin not initialized".
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { missingPluginsOf, type CniConfigView, type CniNetworkView } from '../../../shared/domain/cni';
import { confListFromBytes, confListFromConf, pluginConfFromBytes, type NetworkConfList, type PluginConf } from './conf-list';
import { NOT_INITIALIZED } from './cni-error';
import { resolvePluginBinary } from './plugin-path';

export interface LoadedNetwork {
  list: NetworkConfList;
  ifName: string;
  /** file it came from; undefined for the built-in loopback network */
  source?: string;
  builtin: boolean;
  /** resolved binary per plugin, same order as list.plugins (undefined = missing at load time) */
  binaries: Array<string | undefined>;
}

export interface LoadOptions {
  confDir: string;
  binDirs: string[];
  /** how many conf-dir networks to use; 0 = all (go-cni WithAllConf) */
  maxConfNum: number;
}

export interface LoadOutcome {
  networks: LoadedNetwork[];
  view: CniConfigView;
}

export const LOOPBACK_CONFLIST = '{"cniVersion":"0.3.1","name":"cni-loopback","plugins":[{"type":"loopback"}]}';
const LOOPBACK_IFNAME = 'lo';
const CONF_EXTENSIONS = ['.conf', '.conflist', '.json'];
const IFNAME_PREFIX = 'eth';
/** lo + at least one conf-dir network (containerd's WithMinNetworkCount(2)) */
const MIN_NETWORK_COUNT = 2;

class ConfLoadError extends Error {
  constructor(
    message: string,
    readonly source: string,
  ) {
    super(message);
  }
}

/** libcni ConfFiles: non-recursive, directories skipped, a missing dir is simply empty. */
async function confFiles(dir: string, extensions: string[]): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return entries
    .filter((d) => !d.isDirectory() && extensions.includes(path.extname(d.name)))
    .map((d) => path.join(dir, d.name))
    .sort();
}

/** Extra plugins from `<confdir>/<networkName>/*.conf` (SPEC 1.1 "loadOnlyInlinedPlugins"). */
export async function siblingPlugins(confDir: string, networkName: string): Promise<PluginConf[]> {
  const dir = path.join(confDir, networkName);
  let files: string[];
  try {
    files = await confFiles(dir, ['.conf']);
  } catch (e) {
    throw new Error(`failed to read plugin config files in ${dir}: ${(e as Error).message}`);
  }
  const plugins: PluginConf[] = [];
  for (const file of files) plugins.push(pluginConfFromBytes(await readFile(file)));
  return plugins;
}

async function loadConfListFile(file: string): Promise<NetworkConfList> {
  try {
    const list = confListFromBytes(await readFile(file));
    if (!list.loadOnlyInlinedPlugins) list.plugins.push(...(await siblingPlugins(path.dirname(file), list.name)));
    if (list.plugins.length === 0) throw new Error('no plugin configs found');
    return list;
  } catch (e) {
    throw new ConfLoadError(`failed to load CNI config list file ${file}: ${(e as Error).message}: invalid cni config`, file);
  }
}

async function loadSingleConfFile(file: string): Promise<NetworkConfList> {
  let conf: PluginConf;
  try {
    conf = pluginConfFromBytes(await readFile(file));
  } catch (e) {
    throw new ConfLoadError(`failed to load CNI config file ${file}: ${(e as Error).message}: invalid cni config`, file);
  }
  try {
    return confListFromConf(conf);
  } catch (e) {
    throw new ConfLoadError(
      `failed to convert CNI config file ${file} to CNI config list: ${(e as Error).message}: invalid cni config`,
      file,
    );
  }
}

async function toLoaded(list: NetworkConfList, ifName: string, binDirs: string[], source?: string): Promise<LoadedNetwork> {
  const binaries = await Promise.all(list.plugins.map((p) => resolvePluginBinary(p.type, binDirs)));
  return { list, ifName, source, builtin: source === undefined, binaries };
}

function networkView(n: LoadedNetwork): CniNetworkView {
  return {
    name: n.list.name,
    cniVersion: n.list.cniVersion,
    ifName: n.ifName,
    source: n.source,
    builtin: n.builtin,
    disableCheck: n.list.disableCheck,
    plugins: n.list.plugins.map((p, i) => ({
      type: p.type,
      capabilities: Object.keys(p.capabilities).filter((c) => p.capabilities[c]),
      raw: p.raw,
      binary: n.binaries[i],
    })),
  };
}

/**
 * go-cni stops reading the conf dir once max_conf_num networks are loaded, so the files after them are never used —
 * not even parsed, which hides a broken one. Say so, and (read-only, outside the load) whether each would load.
 */
async function describeSkipped(files: string[], maxConfNum: number): Promise<Array<{ source: string; reason: string }>> {
  const limit = `only the first ${maxConfNum} network${maxConfNum === 1 ? '' : 's'} in the conf dir ${maxConfNum === 1 ? 'is' : 'are'} used (max networks ${maxConfNum})`;
  return Promise.all(
    files.map(async (source) => {
      try {
        const list = source.endsWith('.conflist') ? await loadConfListFile(source) : await loadSingleConfFile(source);
        return { source, reason: `skipped: ${limit}; network "${list.name}" is not attached` };
      } catch (e) {
        return { source, reason: `skipped: ${limit}; it would not load anyway: ${(e as Error).message}` };
      }
    }),
  );
}

export async function loadNetworks(opts: LoadOptions): Promise<LoadOutcome> {
  const loopback = await toLoaded(confListFromBytes(Buffer.from(LOOPBACK_CONFLIST)), LOOPBACK_IFNAME, opts.binDirs);
  const errors: CniConfigView['errors'] = [];
  let confNetworks: LoadedNetwork[] = [];
  let notReadyReason: string | undefined;
  const skipped: NonNullable<CniConfigView['skipped']> = [];
  try {
    const files = await confFiles(opts.confDir, CONF_EXTENSIONS).catch((e: Error) => {
      throw new ConfLoadError(`failed to read config file: ${e.message}: failed to read config file`, opts.confDir);
    });
    if (files.length === 0) throw new ConfLoadError(`no network config found in ${opts.confDir}: ${NOT_INITIALIZED}`, opts.confDir);
    for (const [i, file] of files.entries()) {
      const list = file.endsWith('.conflist') ? await loadConfListFile(file) : await loadSingleConfFile(file);
      confNetworks.push(await toLoaded(list, `${IFNAME_PREFIX}${confNetworks.length}`, opts.binDirs, file));
      if (confNetworks.length === opts.maxConfNum) {
        skipped.push(...(await describeSkipped(files.slice(i + 1), opts.maxConfNum)));
        break;
      }
    }
  } catch (e) {
    // go-cni appends the conf-dir networks only when the whole dir loaded
    confNetworks = [];
    const err = e instanceof ConfLoadError ? e : new ConfLoadError((e as Error).message, opts.confDir);
    errors.push({ source: err.source, message: err.message });
    notReadyReason = err.message.endsWith(NOT_INITIALIZED) ? err.message : NOT_INITIALIZED;
  }
  const networks = [loopback, ...confNetworks];
  const ready = networks.length >= MIN_NETWORK_COUNT;
  const views = networks.map(networkView);
  const missingPlugins = ready ? missingPluginsOf({ networks: views }) : [];
  return {
    networks,
    view: {
      confDir: opts.confDir,
      binDirs: opts.binDirs,
      maxConfNum: opts.maxConfNum,
      networks: views,
      errors,
      ready,
      notReadyReason: ready ? undefined : (notReadyReason ?? NOT_INITIALIZED),
      ...(skipped.length && ready ? { skipped } : {}),
      ...(missingPlugins.length ? { missingPlugins } : {}),
      loadedAt: new Date().toISOString(),
    },
  };
}
