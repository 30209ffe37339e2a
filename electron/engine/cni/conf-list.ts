/**
 * Network configuration parsing as libcni's conf.go does it: conflists, legacy single-plugin confs (up-converted to a
 * one-plugin list) and plugin objects. Parsing never touches the disk; conf-dir.ts does the reading.
 */
import { CNI_NAME_PATTERN } from './names';
import { compareSpecVersions, CURRENT_SPEC_VERSION, isValidSpecVersion } from './spec-version';

export interface PluginConf {
  type: string;
  /** the plugin object exactly as parsed; unknown keys must reach the plugin untouched */
  raw: Record<string, unknown>;
  /** capability name → declared value */
  capabilities: Record<string, boolean>;
}

export interface NetworkConfList {
  name: string;
  cniVersion: string;
  disableCheck: boolean;
  disableGC: boolean;
  loadOnlyInlinedPlugins: boolean;
  plugins: PluginConf[];
  /** the list's bytes (the file itself, or the generated list for an up-converted conf); cached base64 */
  bytes: Buffer;
}

type JsonObject = Record<string, unknown>;

function isObject(x: unknown): x is JsonObject {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function parseJsonObject(bytes: Buffer, what: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new Error(`error parsing ${what}: ${(e as Error).message}`);
  }
  if (!isObject(parsed)) throw new Error(`error parsing ${what}: expected a JSON object`);
  return parsed;
}

/** libcni NetworkPluginConfFromBytes on an already-decoded object, plus the no-path-separator rule of plugin lookup. */
export function pluginConfFromObject(raw: unknown): PluginConf {
  if (!isObject(raw)) throw new Error('error parsing configuration: a plugin must be a JSON object');
  const type = raw.type;
  if (type !== undefined && typeof type !== 'string') throw new Error(`error parsing configuration: invalid 'type' type ${typeof type}`);
  if (!type) throw new Error("error parsing configuration: missing 'type'");
  if (type.includes('/') || type.includes('\\'))
    throw new Error(`error parsing configuration: invalid plugin type "${type}" (contains a path separator)`);
  for (const key of ['name', 'cniVersion'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'string')
      throw new Error(`error parsing configuration: invalid '${key}' type ${typeof raw[key]}`);
  }
  const capabilities: Record<string, boolean> = {};
  if (raw.capabilities !== undefined && raw.capabilities !== null) {
    if (!isObject(raw.capabilities)) throw new Error("error parsing configuration: 'capabilities' must be an object");
    for (const [cap, declared] of Object.entries(raw.capabilities)) {
      if (typeof declared !== 'boolean') throw new Error(`error parsing configuration: capability "${cap}" must be true or false`);
      capabilities[cap] = declared;
    }
  }
  return { type, raw, capabilities };
}

export function pluginConfFromBytes(bytes: Buffer): PluginConf {
  return pluginConfFromObject(parseJsonObject(bytes, 'configuration'));
}

/** Conflist booleans may also be the strings "true"/"false" (any case). */
function readBool(list: JsonObject, key: string): boolean {
  const v = list[key];
  if (v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'string') throw new Error(`error parsing configuration list: invalid type ${typeof v} for ${key}`);
  const s = v.toLowerCase();
  if (s === 'true') return true;
  if (s === 'false') return false;
  throw new Error(`error parsing configuration list: invalid value "${s}" for ${key}`);
}

/** `cniVersions` lets a file offer several versions; the highest one not newer than ours wins (cniVersion joins the vote). */
function pickCniVersion(list: JsonObject): string {
  const single = list.cniVersion;
  if (single !== undefined && typeof single !== 'string')
    throw new Error(`error parsing configuration list: invalid cniVersion type ${typeof single}`);
  const chosen = single ?? '';
  const offered = list.cniVersions;
  if (offered === undefined) return chosen;
  if (!Array.isArray(offered)) throw new Error(`error parsing configuration list: invalid type for cniVersions: ${typeof offered}`);
  const candidates: string[] = [];
  offered.forEach((v, i) => {
    if (typeof v !== 'string') throw new Error(`error parsing configuration list: invalid type for cniVersions index ${i}: ${typeof v}`);
    if (!isValidSpecVersion(v)) throw new Error(`error parsing configuration list: invalid cniVersions entry ${v} at index ${i}`);
    if (compareSpecVersions(v, CURRENT_SPEC_VERSION)! <= 0) candidates.push(v);
  });
  if (chosen !== '') {
    if (!isValidSpecVersion(chosen)) throw new Error(`error parsing configuration list: invalid cniVersion ${chosen}`);
    if (compareSpecVersions(chosen, CURRENT_SPEC_VERSION)! <= 0) candidates.push(chosen);
  }
  return candidates.reduce((best, v) => (compareSpecVersions(v, best)! > 0 ? v : best), candidates[0] ?? chosen);
}

/**
 * libcni NetworkConfFromBytes. A list without a `plugins` key is legal here (its plugins may come from the sibling
 * directory); the caller checks that the final list is not empty.
 */
export function confListFromBytes(bytes: Buffer): NetworkConfList {
  const list = parseJsonObject(bytes, 'configuration list');
  if (!('name' in list)) throw new Error('error parsing configuration list: no name');
  const name = list.name;
  if (typeof name !== 'string') throw new Error(`error parsing configuration list: invalid name type ${typeof name}`);
  if (!CNI_NAME_PATTERN.test(name))
    throw new Error(`error parsing configuration list: invalid network name "${name}" (must match ${CNI_NAME_PATTERN.source})`);
  const cniVersion = pickCniVersion(list);
  const loadOnlyInlinedPlugins = readBool(list, 'loadOnlyInlinedPlugins');
  const out: NetworkConfList = {
    name,
    cniVersion,
    disableCheck: readBool(list, 'disableCheck'),
    disableGC: readBool(list, 'disableGC'),
    loadOnlyInlinedPlugins,
    plugins: [],
    bytes,
  };
  if (!('plugins' in list)) {
    if (loadOnlyInlinedPlugins) throw new Error("error parsing configuration list: `loadOnlyInlinedPlugins` is true, and no 'plugins' key");
    return out;
  }
  if (!Array.isArray(list.plugins)) throw new Error(`error parsing configuration list: invalid 'plugins' type ${typeof list.plugins}`);
  if (list.plugins.length === 0) throw new Error('error parsing configuration list: no plugins in list');
  out.plugins = list.plugins.map((p, i) => {
    try {
      return pluginConfFromObject(p);
    } catch (e) {
      throw new Error(`failed to parse plugin config ${i}: ${(e as Error).message}`);
    }
  });
  return out;
}

/** libcni ConfListFromConf: a legacy single-plugin conf becomes `{cniVersion, name, plugins:[<whole conf>]}`. */
export function confListFromConf(conf: PluginConf): NetworkConfList {
  const generated = { cniVersion: conf.raw.cniVersion ?? '', name: conf.raw.name ?? '', plugins: [conf.raw] };
  return confListFromBytes(Buffer.from(JSON.stringify(generated)));
}
