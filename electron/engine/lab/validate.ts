/**
 * Lab validation of a conflist TEXT: JSON with the error's line/column, the CNI envelope (libcni conf.go's rules:
 * name matching the network-name pattern, cniVersion, a non-empty plugins array whose entries have a `type`), the
 * reference plugins' fields against the JSON Schemas in ./schemas (every key they do not read is an error with the
 * nearest one they do, and addresses/prefixes must be ones the plugins can parse and host-local can allocate from),
 * and the binary each type resolves to. Unknown plugin types are checked for the envelope only, as a runtime would
 * pass their fields through untouched.
 */
import type { LabConflict, LabIssue, LabPluginInfo, LabValidation } from '../../../shared/domain/lab';
import { confListFromBytes } from '../cni/conf-list';
import { CNI_NAME_PATTERN } from '../cni/names';
import { resolvePluginBinary } from '../cni/plugin-path';
import { isValidSpecVersion, specAtLeast } from '../cni/spec-version';
import { allocatableSubnetProblem, cidrProblem, contains, ipProblem, overlaps } from './cidr';
import { conflistFacts } from './conflist-facts';
import { lineColumn, locate, parseJsonText } from './json-text';
import { checkSchema, nearestKey, type JsonSchema, type SchemaProblem } from './schema-check';
import bandwidth from './schemas/bandwidth.json' with { type: 'json' };
import bridge from './schemas/bridge.json' with { type: 'json' };
import firewall from './schemas/firewall.json' with { type: 'json' };
import hostLocal from './schemas/host-local.json' with { type: 'json' };
import ipvlan from './schemas/ipvlan.json' with { type: 'json' };
import loopback from './schemas/loopback.json' with { type: 'json' };
import macvlan from './schemas/macvlan.json' with { type: 'json' };
import portmap from './schemas/portmap.json' with { type: 'json' };
import ptp from './schemas/ptp.json' with { type: 'json' };
import sbr from './schemas/sbr.json' with { type: 'json' };
import staticIpam from './schemas/static.json' with { type: 'json' };
import tuning from './schemas/tuning.json' with { type: 'json' };
import vlan from './schemas/vlan.json' with { type: 'json' };

export const PLUGIN_SCHEMAS: Record<string, JsonSchema> = {
  bandwidth,
  bridge,
  firewall,
  'host-local': hostLocal,
  ipvlan,
  loopback,
  macvlan,
  portmap,
  ptp,
  sbr,
  static: staticIpam,
  tuning,
  vlan,
} as Record<string, JsonSchema>;

/**
 * Keys every plugin object may carry besides its own: the fields of the CNI library's NetConf that every reference
 * plugin embeds (so they decode them even when unused) and the ones a runtime injects (runtimeConfig, args, cni.dev/…).
 */
const PLUGIN_ENVELOPE_KEYS = new Set(['cniVersion', 'name', 'type', 'capabilities', 'ipam', 'dns', 'prevResult', 'runtimeConfig', 'args']);
const isPluginEnvelopeKey = (key: string) => PLUGIN_ENVELOPE_KEYS.has(key) || key.startsWith('cni.dev/');
/** the IPAM plugins decode an untagged Go field `Name` besides their own */
const isIpamEnvelopeKey = (key: string) => key === 'name';
/** the conflist keys libcni reads (conf.go) */
const CONFLIST_KEYS = ['cniVersion', 'cniVersions', 'name', 'disableCheck', 'disableGC', 'loadOnlyInlinedPlugins', 'plugins'];

/**
 * host-local's own range rules (Range.Canonicalize): an allocatable network address, and rangeStart/rangeEnd inside
 * it. Format errors are the schema's, so a range whose subnet does not parse is skipped here.
 */
function hostLocalRangeProblems(ipam: Obj): Array<{ path: Array<string | number>; message: string }> {
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  const ranges: Array<{ range: Obj; path: Array<string | number> }> = [];
  if (typeof ipam.subnet === 'string') ranges.push({ range: ipam, path: [] });
  if (Array.isArray(ipam.ranges))
    ipam.ranges.forEach((set, i) => {
      if (Array.isArray(set)) set.forEach((r, j) => isObj(r) && ranges.push({ range: r, path: ['ranges', i, j] }));
    });
  for (const { range, path } of ranges) {
    const subnet = range.subnet;
    if (typeof subnet !== 'string' || cidrProblem(subnet)) continue;
    const problem = allocatableSubnetProblem(subnet);
    if (problem) out.push({ path: [...path, 'subnet'], message: problem });
    for (const key of ['rangeStart', 'rangeEnd']) {
      const ip = range[key];
      if (typeof ip === 'string' && !ipProblem(ip) && !contains(subnet, ip))
        out.push({ path: [...path, key], message: `${key} ${ip} is not in ${subnet}` });
    }
  }
  return out;
}

/** A live sandbox's network as the conflict check needs it. */
export interface LiveNetworkUse {
  sandboxId: string;
  sandboxName: string;
  network: string;
  bridges: string[];
  subnets: string[];
  /** the pod's addresses (no prefix) */
  ips: string[];
  ipamDirs: string[];
}

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

export interface ParsedConflist {
  name: string;
  cniVersion: string;
  disableCheck: boolean;
  plugins: Obj[];
}

export interface LabValidationResult extends LabValidation {
  parsed?: ParsedConflist;
}

export async function validateConflistText(text: string, binDirs: string[], live: LiveNetworkUse[] = []): Promise<LabValidationResult> {
  const errors: LabIssue[] = [];
  const warnings: string[] = [];
  const out: LabValidationResult = { ok: false, errors, warnings, plugins: [], conflicts: [], checkSupported: false };
  const parsed = parseJsonText(text);
  if ('issue' in parsed) {
    errors.push(parsed.issue);
    return out;
  }
  const at = new IssueReporter(text, errors, warnings);
  const doc = parsed.value;
  if (!isObj(doc)) {
    at.issue([], 'a conflist must be a JSON object');
    return out;
  }
  checkEnvelope(doc, at);
  const plugins = Array.isArray(doc.plugins) ? doc.plugins : [];
  for (const [index, p] of plugins.entries()) {
    const info = await checkPlugin(p, index, binDirs, at);
    if (info) out.plugins.push(info);
  }
  if (errors.length > 0) return out;
  // the engine's own parser must agree (it is what a saved file will be loaded with)
  try {
    confListFromBytes(Buffer.from(text));
  } catch (e) {
    at.issue([], (e as Error).message);
    return out;
  }
  const list: ParsedConflist = {
    name: doc.name as string,
    cniVersion: doc.cniVersion as string,
    disableCheck: doc.disableCheck === true || (typeof doc.disableCheck === 'string' && doc.disableCheck.toLowerCase() === 'true'),
    plugins: plugins as Obj[],
  };
  out.ok = true;
  out.parsed = list;
  out.name = list.name;
  out.cniVersion = list.cniVersion;
  out.checkSupported = specAtLeast(list.cniVersion, '0.4.0') && !list.disableCheck;
  out.conflicts = findConflicts(list, live);
  return out;
}

/** Errors and warnings about one conflist text, each placed at the line and column of the path it names. */
class IssueReporter {
  constructor(
    private readonly text: string,
    private readonly errors: LabIssue[],
    readonly warnings: string[],
  ) {}

  issue(path: Array<string | number>, message: string, atKey = false): void {
    const offset = locate(this.text, path, atKey);
    this.errors.push({ path: path.join('.'), message, ...(offset !== undefined ? { offset, ...lineColumn(this.text, offset) } : {}) });
  }

  warnAt(path: Array<string | number>, message: string): void {
    const offset = locate(this.text, path, true);
    const where = offset !== undefined ? lineColumn(this.text, offset) : undefined;
    this.warnings.push(`${path.join('.')}${where ? ` (line ${where.line}, column ${where.column})` : ''}: ${message}`);
  }

  /** a schema check's problems under `prefix`, each an error or a warning as the check says */
  report(prefix: Array<string | number>, label: string, problems: SchemaProblem[]): void {
    for (const problem of problems) {
      if (problem.warning) this.warnAt([...prefix, ...problem.path], `${label}: ${problem.message}`);
      else this.issue([...prefix, ...problem.path], `${label}: ${problem.message}`, problem.atKey);
    }
  }
}

/** the conflist's own keys: name, cniVersion, plugins, the boolean switches, and keys libcni does not read */
function checkEnvelope(doc: Obj, at: IssueReporter): void {
  if (typeof doc.type === 'string' && !('plugins' in doc))
    at.warnings.push(
      'this is a single-plugin .conf: the lab runs conflists (a list with "plugins"); wrap it as {"cniVersion", "name", "plugins": [ … ]}',
    );
  if (!('name' in doc)) at.issue([], 'missing "name"');
  else if (typeof doc.name !== 'string' || !CNI_NAME_PATTERN.test(doc.name))
    at.issue(['name'], `"name" must match ${CNI_NAME_PATTERN.source}`);
  if (typeof doc.cniVersion !== 'string')
    at.issue(
      doc.cniVersion === undefined ? [] : ['cniVersion'],
      doc.cniVersion === undefined ? 'missing "cniVersion"' : '"cniVersion" must be a string',
    );
  else if (!isValidSpecVersion(doc.cniVersion))
    at.issue(['cniVersion'], `"cniVersion" ${JSON.stringify(doc.cniVersion)} is not a CNI spec version (e.g. 1.0.0)`);
  if (!Array.isArray(doc.plugins))
    at.issue(doc.plugins === undefined ? [] : ['plugins'], doc.plugins === undefined ? 'missing "plugins"' : '"plugins" must be an array');
  else if (doc.plugins.length === 0) at.issue(['plugins'], '"plugins" must not be empty');
  for (const key of Object.keys(doc)) {
    if (CONFLIST_KEYS.includes(key) || (typeof doc.type === 'string' && !('plugins' in doc))) continue;
    const near = nearestKey(key, CONFLIST_KEYS);
    at.warnAt([key], `libcni does not read "${key}"${near ? ` (did you mean ${near}?)` : ''}`);
  }
  for (const key of ['disableCheck', 'disableGC', 'loadOnlyInlinedPlugins']) {
    const v = doc[key];
    if (v !== undefined && typeof v !== 'boolean' && !(typeof v === 'string' && /^(true|false)$/i.test(v)))
      at.issue([key], `"${key}" must be true or false`);
  }
}

/** one plugin: its type, capabilities and (for a reference plugin) its schema and IPAM's; undefined when it has no usable type */
async function checkPlugin(p: unknown, index: number, binDirs: string[], at: IssueReporter): Promise<LabPluginInfo | undefined> {
  if (!isObj(p)) {
    at.issue(['plugins', index], 'a plugin must be a JSON object');
    return undefined;
  }
  if (typeof p.type !== 'string' || p.type === '') {
    at.issue(p.type === undefined ? ['plugins', index] : ['plugins', index, 'type'], 'every plugin needs a "type" (the binary name)');
    return undefined;
  }
  if (/[/\\]/.test(p.type)) at.issue(['plugins', index, 'type'], '"type" must not contain a path separator');
  if (p.capabilities !== undefined && (!isObj(p.capabilities) || Object.values(p.capabilities).some((v) => typeof v !== 'boolean'))) {
    at.issue(['plugins', index, 'capabilities'], '"capabilities" must map names to true/false');
  }
  const schema = PLUGIN_SCHEMAS[p.type];
  if (schema) at.report(['plugins', index], p.type, checkSchema(schema, p, [], [], { envelopeKey: isPluginEnvelopeKey }));
  if (p.type === 'host-local') at.report(['plugins', index], p.type, hostLocalRangeProblems(p));
  // IPAM is a delegated plugin: check the known ones against their own schema too
  if (
    isObj(p.ipam) &&
    typeof p.ipam.type === 'string' &&
    PLUGIN_SCHEMAS[p.ipam.type] &&
    (p.ipam.type === 'host-local' || p.ipam.type === 'static')
  ) {
    at.report(
      ['plugins', index, 'ipam'],
      p.ipam.type,
      checkSchema(PLUGIN_SCHEMAS[p.ipam.type]!, p.ipam, [], [], { envelopeKey: isIpamEnvelopeKey }),
    );
    if (p.ipam.type === 'host-local') at.report(['plugins', index, 'ipam'], p.ipam.type, hostLocalRangeProblems(p.ipam));
  }
  const info: LabPluginInfo = {
    index,
    type: p.type,
    binary: await resolvePluginBinary(p.type, binDirs),
    ...(schema ? { schema: `${p.type}.json` } : {}),
    capabilities: isObj(p.capabilities) ? Object.keys(p.capabilities).filter((c) => (p.capabilities as Obj)[c] === true) : [],
  };
  if (!info.binary) at.warnings.push(`plugin ${index} (${p.type}): no binary "${p.type}" in ${binDirs.join(', ')}; its ADD will fail`);
  if (!schema) at.warnings.push(`plugin ${index} (${p.type}): not a reference plugin; only the envelope is checked`);
  if (isObj(p.ipam) && typeof p.ipam.type === 'string' && !(await resolvePluginBinary(p.ipam.type, binDirs))) {
    at.warnings.push(`plugin ${index} (${p.type}): IPAM plugin "${p.ipam.type}" not found in ${binDirs.join(', ')}`);
  }
  return info;
}

/** Live sandboxes whose bridge, subnet, addresses or host-local dir the conflist would share. */
export function findConflicts(list: ParsedConflist, live: LiveNetworkUse[]): LabConflict[] {
  const facts = conflistFacts(list.name, list.plugins);
  const out: LabConflict[] = [];
  for (const use of live) {
    const shares: string[] = [];
    for (const b of facts.bridges) if (use.bridges.includes(b)) shares.push(`bridge ${b}`);
    for (const s of facts.subnets) {
      for (const t of use.subnets) if (overlaps(s, t)) shares.push(`subnet ${s} overlaps ${t}`);
      for (const ip of use.ips) if (overlaps(s, ip) && !use.subnets.some((t) => overlaps(t, ip))) shares.push(`pod IP ${ip} in ${s}`);
    }
    for (const d of facts.ipamDirs) if (use.ipamDirs.includes(d)) shares.push(`host-local reservations in ${d}`);
    if (shares.length > 0)
      out.push({ sandboxId: use.sandboxId, sandboxName: use.sandboxName, network: use.network, shares: [...new Set(shares)] });
  }
  return out;
}
