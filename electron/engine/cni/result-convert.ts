/**
 * CNI results in every spec version (pkg/types/020, 040, 100), normalised to the 1.x shape and converted back to
 * whatever version a conflist speaks before being injected as prevResult. Parsing is strict enough that bad plugin
 * output becomes an error, never a crash later on.
 */
import { isIP } from 'node:net';
import type { CniDns, CniInterface, CniIpConfig, CniResult, CniRoute } from '../../../shared/domain/cni';

type Family = 'v02' | 'v04' | 'v1';
const FAMILY_OF: Record<string, Family> = {
  '0.1.0': 'v02',
  '0.2.0': 'v02',
  '0.3.0': 'v04',
  '0.3.1': 'v04',
  '0.4.0': 'v04',
  '1.0.0': 'v1',
  '1.1.0': 'v1',
};

/** A result as a plugin printed it: its spec version plus the content in 1.x shape. */
export interface ParsedResult {
  version: string;
  result: CniResult;
}

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

function familyOf(version: string): Family {
  const f = FAMILY_OF[version];
  if (!f) throw new Error(`unsupported CNI result version "${version}"`);
  return f;
}

function optString(o: Json, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new Error(`${where}.${key}: expected a string`);
  return v;
}

function optInt(o: Json, key: string, where: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`${where}.${key}: expected an integer`);
  return v;
}

function optStrings(o: Json, key: string, where: string): string[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new Error(`${where}.${key}: expected an array of strings`);
  return v as string[];
}

function list(o: Json, key: string, where: string): Json[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => !isObject(x))) throw new Error(`${where}.${key}: expected an array of objects`);
  return v as Json[];
}

function checkIp(ip: string, where: string): string {
  if (isIP(ip) === 0) throw new Error(`${where}: invalid IP address "${ip}"`);
  return ip;
}

function checkCidr(cidr: string, where: string): string {
  const [ip = '', bits, extra] = cidr.split('/');
  const family = isIP(ip);
  const max = family === 4 ? 32 : 128;
  if (family === 0 || extra !== undefined || bits === undefined || !/^\d+$/.test(bits) || Number(bits) > max)
    throw new Error(`${where}: invalid CIDR address: ${cidr}`);
  return cidr;
}

function requiredCidr(o: Json, key: string, where: string): string {
  const v = optString(o, key, where);
  if (v === undefined) throw new Error(`${where}.${key}: missing`);
  return checkCidr(v, `${where}.${key}`);
}

function parseDns(raw: unknown): CniDns {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) throw new Error('dns: expected an object');
  const dns: CniDns = {};
  const nameservers = optStrings(raw, 'nameservers', 'dns');
  const domain = optString(raw, 'domain', 'dns');
  const search = optStrings(raw, 'search', 'dns');
  const options = optStrings(raw, 'options', 'dns');
  if (nameservers?.length) dns.nameservers = nameservers;
  if (domain) dns.domain = domain;
  if (search?.length) dns.search = search;
  if (options?.length) dns.options = options;
  return dns;
}

function parseRoute(r: Json, where: string): CniRoute {
  const route: CniRoute = { dst: requiredCidr(r, 'dst', where) };
  const gw = optString(r, 'gw', where);
  if (gw) route.gw = checkIp(gw, `${where}.gw`);
  for (const key of ['mtu', 'advmss', 'priority', 'table', 'scope'] as const) {
    const v = optInt(r, key, where);
    if (v !== undefined) route[key] = v;
  }
  return route;
}

function parseInterface(i: Json, where: string): CniInterface {
  const name = optString(i, 'name', where) ?? '';
  const iface: CniInterface = { name };
  const mac = optString(i, 'mac', where);
  const sandbox = optString(i, 'sandbox', where);
  const mtu = optInt(i, 'mtu', where);
  const socketPath = optString(i, 'socketPath', where);
  const pciID = optString(i, 'pciID', where);
  if (mac) iface.mac = mac;
  if (mtu) iface.mtu = mtu;
  if (sandbox) iface.sandbox = sandbox;
  if (socketPath) iface.socketPath = socketPath;
  if (pciID) iface.pciID = pciID;
  return iface;
}

function parseIpConfig(ip: Json, where: string): CniIpConfig {
  const out: CniIpConfig = { address: requiredCidr(ip, 'address', where) };
  const gateway = optString(ip, 'gateway', where);
  if (gateway) out.gateway = checkIp(gateway, `${where}.gateway`);
  const index = optInt(ip, 'interface', where);
  if (index !== undefined) {
    if (index < 0) throw new Error(`${where}.interface: must not be negative`);
    out.interface = index;
  }
  return out;
}

/** 0.3.x/0.4.0 and 1.x share one layout; 1.x just has more optional fields. */
function parseModern(raw: Json): Omit<CniResult, 'cniVersion'> {
  const out: Omit<CniResult, 'cniVersion'> = {};
  const interfaces = list(raw, 'interfaces', 'result').map((i, n) => parseInterface(i, `interfaces[${n}]`));
  const ips = list(raw, 'ips', 'result').map((ip, n) => parseIpConfig(ip, `ips[${n}]`));
  const routes = list(raw, 'routes', 'result').map((r, n) => parseRoute(r, `routes[${n}]`));
  if (interfaces.length) out.interfaces = interfaces;
  if (ips.length) out.ips = ips;
  if (routes.length) out.routes = routes;
  out.dns = parseDns(raw.dns);
  return out;
}

/** 0.1.0/0.2.0 `ip4`/`ip6` blocks become ips without an interface index; their routes are concatenated. */
function parseLegacy(raw: Json): Omit<CniResult, 'cniVersion'> {
  const ips: CniIpConfig[] = [];
  const routes: CniRoute[] = [];
  for (const key of ['ip4', 'ip6']) {
    const block = raw[key];
    if (block === undefined || block === null) continue;
    if (!isObject(block)) throw new Error(`${key}: expected an object`);
    const ip: CniIpConfig = { address: requiredCidr(block, 'ip', key) };
    const gateway = optString(block, 'gateway', key);
    if (gateway) ip.gateway = checkIp(gateway, `${key}.gateway`);
    ips.push(ip);
    routes.push(...list(block, 'routes', key).map((r, n) => parseRoute(r, `${key}.routes[${n}]`)));
  }
  const out: Omit<CniResult, 'cniVersion'> = { dns: parseDns(raw.dns) };
  if (ips.length) out.ips = ips;
  if (routes.length) out.routes = routes;
  return out;
}

/** Parses a decoded result object whose version is known (libcni create.Create). */
export function parseResultObject(raw: unknown, version: string): ParsedResult {
  if (!isObject(raw)) throw new Error('result is not a JSON object');
  const family = familyOf(version);
  const body = family === 'v02' ? parseLegacy(raw) : parseModern(raw);
  return { version, result: { cniVersion: version, ...body } };
}

/**
 * A plugin's stdout on success: a result without cniVersion is taken to be in the config's version
 * (libcni fixupResultVersion); an empty config version means 0.1.0.
 */
export function parsePluginResult(stdout: string, configVersion: string): ParsedResult {
  let raw: unknown;
  try {
    raw = JSON.parse(stdout);
  } catch (e) {
    throw new Error(`failed to unmarshal raw result: ${(e as Error).message}`);
  }
  if (raw === null) raw = {};
  if (!isObject(raw)) throw new Error('failed to unmarshal raw result: not a JSON object');
  const printed = typeof raw.cniVersion === 'string' && raw.cniVersion !== '' ? raw.cniVersion : configVersion || '0.1.0';
  return parseResultObject(raw, printed);
}

/** A cached or stored result that carries its own version (libcni create.CreateFromBytes). */
export function parseVersionedResult(raw: unknown): ParsedResult {
  const version = isObject(raw) && typeof raw.cniVersion === 'string' && raw.cniVersion !== '' ? raw.cniVersion : '0.1.0';
  return parseResultObject(raw, version);
}

const familyOfIp = (cidr: string): '4' | '6' => (isIP(cidr.split('/')[0] ?? '') === 4 ? '4' : '6');

function toV04(r: CniResult, version: string): Json {
  const out: Json = { cniVersion: version };
  if (r.interfaces)
    out.interfaces = r.interfaces.map((i) => ({
      name: i.name,
      ...(i.mac ? { mac: i.mac } : {}),
      ...(i.sandbox ? { sandbox: i.sandbox } : {}),
    }));
  if (r.ips) out.ips = r.ips.map((ip) => ({ version: familyOfIp(ip.address), ...ip }));
  if (r.routes) out.routes = r.routes;
  out.dns = r.dns ?? {};
  return out;
}

/** Only the first IP of each family survives, with the routes of its family (040 convertTo02x). */
function toV02(r: CniResult, version: string): Json {
  const out: Json = { cniVersion: version };
  for (const fam of ['4', '6'] as const) {
    const ip = r.ips?.find((i) => familyOfIp(i.address) === fam);
    if (!ip) continue;
    const routes = (r.routes ?? [])
      .filter((rt) => familyOfIp(rt.dst) === fam)
      .map((rt) => ({ dst: rt.dst, ...(rt.gw ? { gw: rt.gw } : {}) }));
    out[`ip${fam}`] = { ip: ip.address, ...(ip.gateway ? { gateway: ip.gateway } : {}), ...(routes.length ? { routes } : {}) };
  }
  if (!out.ip4 && !out.ip6) throw new Error('cannot convert: no valid IP addresses');
  out.dns = r.dns ?? {};
  return out;
}

/** The JSON a plugin of `version` expects to read (result.GetAsVersion). */
export function resultAsVersion(r: CniResult, version: string): Json {
  switch (familyOf(version)) {
    case 'v1': {
      const { cniVersion: _ignored, ...body } = r;
      return { cniVersion: version, ...body, dns: r.dns ?? {} };
    }
    case 'v04':
      return toV04(r, version);
    case 'v02':
      return toV02(r, version);
  }
}

/** The 1.x view of a result (go-cni converts every network result to 1.0.0); 1.x results keep their own version. */
export function toV1View(p: ParsedResult): CniResult {
  return familyOf(p.version) === 'v1' ? p.result : { ...p.result, cniVersion: '1.0.0' };
}
