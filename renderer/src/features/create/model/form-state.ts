/**
 * The create form's state and its two-way mapping to a CRI PodSandboxConfig. Validation uses the shared rules
 * (zod schema, containerd's bandwidth quantity parser, port-mapping rules) so the form, the preview and the engine
 * agree by construction. Errors are keyed by field so each shows inline next to its input.
 */
import {
  NamespaceMode,
  Protocol,
  PodSandboxConfigSchema,
  formatIssues,
  protocolName,
  type IpPreference,
  type PodSandboxConfigInput,
  type ProtocolName,
} from '../../../../../shared/domain/config';
import {
  BANDWIDTH_UNITS,
  EGRESS_ANNOTATION,
  INGRESS_ANNOTATION,
  parseBandwidthValue,
  toQuantity,
  type BandwidthUnit,
} from '../../../../../shared/domain/bandwidth';
import type { KeyValueRow } from '../../../lib/ui/KeyValueEditor';

export interface PortRow {
  key: string;
  protocol: ProtocolName;
  containerPort: string;
  hostPort: string;
  hostIp: string;
}
/** a label or annotation row (the shared key = value editor's row) */
export type KvRow = KeyValueRow;
export interface BandwidthInput {
  value: string;
  unit: BandwidthUnit | '';
}

export interface FormState {
  name: string;
  namespace: string;
  uid: string;
  attempt: string;
  hostname: string;
  network: 'pod' | 'host';
  ports: PortRow[];
  dnsServers: string;
  dnsSearches: string;
  dnsOptions: string;
  labels: KvRow[];
  /** annotations other than the two bandwidth ones, which have their own helpers */
  annotations: KvRow[];
  ingress: BandwidthInput;
  egress: BandwidthInput;
  cgroupParent: string;
  ipPreference: IpPreference | '';
  /** CRI runtime_handler: '' is the engine's default (runc); crun runs the pod's containers on crun */
  runtimeHandler: string;
  /**
   * The pod's log_directory: undefined follows the kubelet's default for the namespace, name and uid as they are
   * typed; a string is what the user typed (empty: no log directory, so containers keep no log).
   */
  logDirectory?: string;
  /** fields the form does not edit but an imported config had; kept so export round-trips */
  extra: { linux?: Record<string, unknown> };
}

/** where kubelet puts a pod's logs: /var/log/pods/<namespace>_<name>_<uid> (containers log to <name>/<restart>.log under it) */
export const KUBELET_POD_LOGS = '/var/log/pods';
export const defaultLogDirectory = (m: { namespace: string; name: string; uid: string }) =>
  `${KUBELET_POD_LOGS}/${m.namespace.trim()}_${m.name.trim()}_${m.uid.trim()}`;

/** the log directory the pod will get ('' when none) */
export const logDirectoryOf = (f: FormState): string => (f.logDirectory ?? defaultLogDirectory(f)).trim();

let counter = 0;
export const rowKey = () => `r${++counter}`;
export const newUid = () => globalThis.crypto.randomUUID();

export function emptyForm(): FormState {
  return {
    name: '',
    namespace: 'default',
    uid: newUid(),
    attempt: '0',
    hostname: '',
    network: 'pod',
    ports: [],
    dnsServers: '',
    dnsSearches: '',
    dnsOptions: '',
    labels: [],
    annotations: [],
    ingress: { value: '', unit: 'M' },
    egress: { value: '', unit: 'M' },
    cgroupParent: '',
    ipPreference: '',
    runtimeHandler: '',
    extra: {},
  };
}

export const newPortRow = (): PortRow => ({ key: rowKey(), protocol: 'TCP', containerPort: '', hostPort: '', hostIp: '' });
export const newKvRow = (k = '', v = ''): KvRow => ({ key: rowKey(), k, v });

/** Splits lists typed one per line, or separated by commas or spaces. */
export const splitList = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** what the number box may hold while a unit is picked: digits with an optional decimal part */
const PLAIN_NUMBER = /^(\d+(\.\d*)?|\.\d+)$/;
/** what a bandwidth may be, said with examples instead of apimachinery's regular expression */
export const BANDWIDTH_ACCEPTED =
  'bits per second from 1k to 1P: a number with an optional suffix k, M, G, T (×1000) or Ki, Mi, Gi, Ti (×1024), e.g. 10M, 512k, 1.5G, 100Mi';

/** The annotation text, or undefined when the box is empty or the number and the unit cannot make one ("10Q" + M). */
export function bandwidthQuantity(b: BandwidthInput): string | undefined {
  const v = b.value.trim();
  if (v === '') return undefined;
  if (b.unit !== '' && !PLAIN_NUMBER.test(v)) return undefined;
  return toQuantity(v, b.unit);
}

/** "10M" typed into the number box while a unit is picked: the number and the unit it names, else undefined */
export function splitTypedUnit(value: string): BandwidthInput | undefined {
  const m = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(Ki|Mi|Gi|Ti|k|M|G|T)\s*$/.exec(value);
  return m ? { value: m[1]!, unit: m[2] as BandwidthUnit } : undefined;
}

/** Why the bandwidth boxes do not make a usable annotation, in terms of what to type; undefined when they do. */
export function bandwidthError(b: BandwidthInput): string | undefined {
  const v = b.value.trim();
  if (v === '') return undefined;
  if (b.unit !== '' && !PLAIN_NUMBER.test(v)) {
    return `"${v}" is not a number: with the unit set to ${b.unit}, type only the number (e.g. 10 or 2.5), or pick "(no suffix)" to type a whole quantity such as 10M or 512Ki`;
  }
  const q = toQuantity(v, b.unit);
  const r = parseBandwidthValue(q);
  if (!('error' in r)) return undefined;
  if (/regular expression|suffix/.test(r.error)) return `"${q}" is not a bandwidth. Accepted: ${BANDWIDTH_ACCEPTED}`;
  return `"${q}": ${r.error}. Accepted: ${BANDWIDTH_ACCEPTED}`;
}

/** Why a hostname is invalid (RFC 1123 parts; the kernel's UTS name takes at most 64 bytes), or undefined. */
export function hostnameError(raw: string): string | undefined {
  const h = raw.trim();
  if (h === '') return undefined;
  if (/\s/.test(raw.replace(/^\s+|\s+$/g, '')))
    return `contains a space: a hostname is one word of letters, digits, "-" and "." (e.g. web-1.example)`;
  if (h.length > 64)
    return `is ${h.length} characters long: at most 64 fit (the kernel's limit for a host name, which the pod's UTS namespace gets)`;
  const bad = [...new Set(h.replace(/[a-zA-Z0-9.-]/g, ''))];
  if (bad.length) return `contains ${bad.map((c) => JSON.stringify(c)).join(', ')}: only letters, digits, "-" and "." are allowed`;
  const label = h.split('.').find((l) => l === '' || l.startsWith('-') || l.endsWith('-'));
  if (label !== undefined)
    return label === ''
      ? 'has an empty part (".." or a leading/trailing "."): each dot-separated part needs at least one letter or digit'
      : `part "${label}" starts or ends with "-": each part must start and end with a letter or digit`;
  return undefined;
}

/** "10M" ⇒ {value: "10", unit: "M"}; anything else stays as typed with no unit. */
export function splitQuantity(q: string): BandwidthInput {
  const units = [...BANDWIDTH_UNITS].sort((a, b) => b.length - a.length);
  for (const u of units) {
    if (q.endsWith(u) && /^[0-9.]+$/.test(q.slice(0, -u.length))) return { value: q.slice(0, -u.length), unit: u };
  }
  return { value: q, unit: '' };
}

const toMap = (rows: KvRow[]) => Object.fromEntries(rows.filter((r) => r.k.trim() !== '').map((r) => [r.k.trim(), r.v]));
const intOr = (s: string, dflt: number) => (s.trim() === '' ? dflt : Number(s));

/** The form as the CRI PodSandboxConfig crictl would read (snake_case, numeric enums). */
export function toConfig(f: FormState): PodSandboxConfigInput {
  const annotations = toMap(f.annotations);
  const ingress = bandwidthQuantity(f.ingress);
  const egress = bandwidthQuantity(f.egress);
  if (ingress !== undefined) annotations[INGRESS_ANNOTATION] = ingress;
  if (egress !== undefined) annotations[EGRESS_ANNOTATION] = egress;
  const config: PodSandboxConfigInput = {
    metadata: { name: f.name.trim(), namespace: f.namespace.trim(), uid: f.uid.trim(), attempt: intOr(f.attempt, 0) },
    hostname: f.hostname.trim(),
    port_mappings: f.ports.map((p) => ({
      protocol: Protocol[p.protocol],
      container_port: intOr(p.containerPort, 0),
      host_port: intOr(p.hostPort, 0),
      host_ip: p.hostIp.trim(),
    })),
    labels: toMap(f.labels),
    annotations,
  };
  const logDirectory = logDirectoryOf(f);
  if (logDirectory) config.log_directory = logDirectory;
  const dns = { servers: splitList(f.dnsServers), searches: splitList(f.dnsSearches), options: splitList(f.dnsOptions) };
  if (dns.servers.length || dns.searches.length || dns.options.length) config.dns_config = dns;
  const linux: Record<string, unknown> = { ...(f.extra.linux ?? {}) };
  if (f.cgroupParent.trim()) linux.cgroup_parent = f.cgroupParent.trim();
  const sc = { ...((linux.security_context as Record<string, unknown> | undefined) ?? {}) };
  const ns = { ...((sc.namespace_options as Record<string, unknown> | undefined) ?? {}) };
  if (f.network === 'host') ns.network = NamespaceMode.NODE;
  else delete ns.network;
  if (Object.keys(ns).length) sc.namespace_options = ns;
  else delete sc.namespace_options;
  if (Object.keys(sc).length) linux.security_context = sc;
  else delete linux.security_context;
  if (Object.keys(linux).length) config.linux = linux as PodSandboxConfigInput['linux'];
  return config;
}

/** Fills the form from a config (import, clone). Unknown-to-the-form parts go to `extra`. */
export function fromConfig(c: PodSandboxConfigInput): FormState {
  const base = emptyForm();
  const ann = { ...(c.annotations ?? {}) };
  const ingress = ann[INGRESS_ANNOTATION];
  const egress = ann[EGRESS_ANNOTATION];
  delete ann[INGRESS_ANNOTATION];
  delete ann[EGRESS_ANNOTATION];
  const linux = { ...((c.linux ?? {}) as Record<string, unknown>) };
  const cgroupParent = typeof linux.cgroup_parent === 'string' ? linux.cgroup_parent : '';
  delete linux.cgroup_parent;
  const sc = { ...((linux.security_context as Record<string, unknown> | undefined) ?? {}) };
  const ns = { ...((sc.namespace_options as Record<string, unknown> | undefined) ?? {}) };
  const netMode = ns.network;
  const host = netMode === NamespaceMode.NODE || (typeof netMode === 'string' && netMode.toUpperCase() === 'NODE');
  delete ns.network;
  if (Object.keys(ns).length) sc.namespace_options = ns;
  else delete sc.namespace_options;
  if (Object.keys(sc).length) linux.security_context = sc;
  else delete linux.security_context;
  return {
    ...base,
    name: c.metadata.name ?? '',
    namespace: c.metadata.namespace ?? '',
    uid: c.metadata.uid || base.uid,
    attempt: String(c.metadata.attempt ?? 0),
    hostname: c.hostname ?? '',
    network: host ? 'host' : 'pod',
    ports: (c.port_mappings ?? []).map((p) => ({
      key: rowKey(),
      protocol: (typeof p.protocol === 'string' ? p.protocol.toUpperCase() : protocolName(Number(p.protocol ?? 0))) as ProtocolName,
      containerPort: p.container_port !== undefined ? String(p.container_port) : '',
      hostPort: p.host_port !== undefined && p.host_port !== 0 ? String(p.host_port) : p.host_port === 0 ? '0' : '',
      hostIp: p.host_ip ?? '',
    })),
    dnsServers: (c.dns_config?.servers ?? []).join('\n'),
    dnsSearches: (c.dns_config?.searches ?? []).join('\n'),
    dnsOptions: (c.dns_config?.options ?? []).join('\n'),
    labels: Object.entries(c.labels ?? {}).map(([k, v]) => newKvRow(k, v)),
    annotations: Object.entries(ann).map(([k, v]) => newKvRow(k, v)),
    ingress: ingress !== undefined ? splitQuantity(ingress) : base.ingress,
    egress: egress !== undefined ? splitQuantity(egress) : base.egress,
    cgroupParent,
    logDirectory: followsKubeletDefault(c) ? undefined : (c.log_directory ?? ''),
    extra: Object.keys(linux).length ? { linux } : {},
  };
}

/**
 * A config whose log directory is the kubelet's for its own namespace and name (an exported form, a clone whose uid
 * was just renewed): the form keeps deriving it, so it follows the new uid instead of naming the old one.
 */
function followsKubeletDefault(c: PodSandboxConfigInput): boolean {
  const prefix = `${KUBELET_POD_LOGS}/${c.metadata.namespace ?? ''}_${c.metadata.name ?? ''}_`;
  return !!c.log_directory?.startsWith(prefix) && !c.log_directory.slice(prefix.length).includes('/');
}

export type FieldErrors = Record<string, string>;

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const looksLikeIp = (s: string) => IPV4.test(s) || (/^[0-9a-fA-F:.]+$/.test(s) && s.includes(':'));

function portError(text: string, min: number, what: string): string | undefined {
  if (text.trim() === '') return min === 0 ? undefined : `${what} is required`;
  const n = Number(text);
  if (!Number.isInteger(n)) return `${what} must be a whole number`;
  if (n < min || n > 65535) return `${what} must be between ${min} and 65535`;
  return undefined;
}

/** Field-level errors, keyed `name`, `ports.<rowKey>.hostPort`, `ingress`, `labels.<rowKey>` … */
export function validateForm(f: FormState): FieldErrors {
  const e: FieldErrors = {};
  if (!f.name.trim()) e.name = 'name is required (crictl and containerd refuse an empty name)';
  else if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(f.name.trim())) e.name = 'use lower-case letters, digits, "-" and "."';
  if (!f.namespace.trim()) e.namespace = 'namespace is required';
  if (!f.uid.trim()) e.uid = 'uid is required';
  if (!/^\d+$/.test(f.attempt.trim() || '0')) e.attempt = 'attempt must be a non-negative whole number';
  const host = hostnameError(f.hostname);
  if (host) e.hostname = `hostname ${host}`;
  // the engine refuses it (runc cannot set a hostname without a private UTS namespace): said here, before a run
  else if (f.network === 'host' && f.hostname.trim())
    e.hostname = "a host-network pod shares the host's UTS namespace, so it keeps the host's hostname: leave this empty";
  const logDirectory = logDirectoryOf(f);
  if (logDirectory && !logDirectory.startsWith('/'))
    e.logDirectory = 'the log directory is an absolute path (kubelet uses /var/log/pods/…)';
  const seen = new Set<string>();
  for (const p of f.ports) {
    const c = portError(p.containerPort, 1, 'container port');
    if (c) e[`ports.${p.key}.containerPort`] = c;
    const h = portError(p.hostPort, 0, 'host port');
    if (h) e[`ports.${p.key}.hostPort`] = h;
    if (p.hostIp.trim() && !looksLikeIp(p.hostIp.trim())) e[`ports.${p.key}.hostIp`] = 'not an IP address';
    const hp = Number(p.hostPort || 0);
    const id = `${p.protocol}/${p.hostIp.trim()}/${hp}`;
    if (!h && hp > 0) {
      if (seen.has(id)) e[`ports.${p.key}.hostPort`] = `host port ${hp}/${p.protocol.toLowerCase()} is mapped twice`;
      seen.add(id);
    }
  }
  for (const server of splitList(f.dnsServers)) if (!looksLikeIp(server)) e.dnsServers = `"${server}" is not an IP address`;
  for (const [list, rows] of [
    ['labels', f.labels],
    ['annotations', f.annotations],
  ] as const) {
    const keys = new Set<string>();
    for (const r of rows) {
      const k = r.k.trim();
      if (!k && r.v) e[`${list}.${r.key}`] = 'key is empty';
      else if (k && keys.has(k)) e[`${list}.${r.key}`] = `duplicate key "${k}"`;
      else if (list === 'annotations' && (k === INGRESS_ANNOTATION || k === EGRESS_ANNOTATION))
        e[`${list}.${r.key}`] = 'use the bandwidth fields for this annotation';
      keys.add(k);
    }
  }
  for (const dir of ['ingress', 'egress'] as const) {
    const err = bandwidthError(f[dir]);
    if (err) e[dir] = err;
  }
  // Last line of defence: the same schema the router applies.
  if (Object.keys(e).length === 0) {
    const parsed = PodSandboxConfigSchema.safeParse(toConfig(f));
    if (!parsed.success) e.form = formatIssues(parsed.error).join('; ');
  }
  return e;
}

/**
 * The sandbox that already holds this name, when a run failed on a name clash (AlreadyExists): the engine puts the
 * holder in the details; over CRI only containerd's text carries it ('… is reserved for "<id>"').
 */
export function clashingSandboxId(error: unknown): string | undefined {
  if (!error || typeof error !== 'object' || (error as { code?: unknown }).code !== 'AlreadyExists') return undefined;
  const seen = new Set<unknown>();
  for (let e: unknown = error; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const holder = ((e as { details?: unknown }).details as { holder?: unknown } | undefined)?.holder;
    if (typeof holder === 'string' && holder) return holder;
    const m = /is reserved for "([0-9a-f]{8,})"/.exec(String((e as { message?: unknown }).message ?? ''));
    if (m) return m[1];
  }
  return undefined;
}
