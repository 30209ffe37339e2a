/**
 * What a conflist says about the host resources it will use: bridges, subnets, host-local reservation dirs, and the
 * host links and sysctls its plugins touch in place.
 */
import { changeOwners, type ChangeOwners } from './changes';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** the bridge plugin's default when `bridge` is absent */
export const DEFAULT_BRIDGE = 'cni0';
/** host-local's default dataDir */
export const DEFAULT_HOST_LOCAL_DIR = '/var/lib/cni/networks';

export interface ConflistFacts {
  bridges: string[];
  subnets: string[];
  /** `<dataDir>/<network>` of every host-local IPAM */
  ipamDirs: string[];
  owners: ChangeOwners;
}

function ipamSubnets(ipam: Obj): string[] {
  const out: string[] = [];
  if (typeof ipam.subnet === 'string') out.push(ipam.subnet);
  if (Array.isArray(ipam.ranges)) {
    for (const set of ipam.ranges)
      if (Array.isArray(set)) for (const r of set) if (isObj(r) && typeof r.subnet === 'string') out.push(r.subnet);
  }
  if (Array.isArray(ipam.addresses)) for (const a of ipam.addresses) if (isObj(a) && typeof a.address === 'string') out.push(a.address);
  return out;
}

export function conflistFacts(name: string, plugins: Obj[]): ConflistFacts {
  const facts: ConflistFacts = { bridges: [], subnets: [], ipamDirs: [], owners: changeOwners(plugins, DEFAULT_BRIDGE) };
  for (const p of plugins) {
    if (p.type === 'bridge') facts.bridges.push(typeof p.bridge === 'string' && p.bridge ? p.bridge : DEFAULT_BRIDGE);
    if (isObj(p.ipam)) {
      facts.subnets.push(...ipamSubnets(p.ipam));
      if (p.ipam.type === 'host-local')
        facts.ipamDirs.push(`${typeof p.ipam.dataDir === 'string' && p.ipam.dataDir ? p.ipam.dataDir : DEFAULT_HOST_LOCAL_DIR}/${name}`);
    }
  }
  return facts;
}
