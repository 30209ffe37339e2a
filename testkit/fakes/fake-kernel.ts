/**
 * What a kernel would report after the FakeCniManager's plugins ran, in the shape LinuxLiveReader returns: the
 * result's addresses on lo/eth0 (plus the link-local address the kernel adds by itself), connected and default
 * routes, tbf qdiscs where the bandwidth plugin got a rate, and portmap's DNAT rules in its chain layout. It is the
 * CNI result applied faithfully; tests that need a kernel that disagrees use FakeLiveReader.tamper.
 */
import { createHash } from 'node:crypto';
import type { CniBandwidth } from '../../shared/domain/bandwidth';
import type { LiveAddress, LiveInterface, LiveRoute } from '../../shared/domain/live';
import type { CniPortMapping } from '../../shared/domain/portmap';
import type { RawLiveNetwork } from '../../electron/engine/netns/live-reader';
import type { FakeCniManager, FakeNetwork } from './fake-cni';

export function fakeKernelView(cni: FakeCniManager, netnsPath: string, hostDevices: string[]): RawLiveNetwork {
  const containerId = cni.calls.findLast((c) => c.op === 'setup' && c.netnsPath === netnsPath)?.containerId ?? '';
  const attached = [...cni.cache.values()]
    .filter((a) => a.result?.interfaces?.some((i) => i.sandbox === netnsPath))
    .map((a) => ({ a, net: cni.networks.find((n) => n.name === a.network) }));
  const interfaces: LiveInterface[] = [];
  const routes: LiveRoute[] = [];
  const hostLinkKinds: Record<string, string> = {};
  const qdiscs: RawLiveNetwork['qdiscs'] = {};
  const nat: RawLiveNetwork['nat'] = { v4: [], v6: [] };

  for (const { a, net } of attached) {
    const result = a.result!;
    const ifIndex = result.interfaces!.findIndex((i) => i.sandbox === netnsPath);
    const iface = result.interfaces![ifIndex]!;
    const ips = (result.ips ?? []).filter((ip) => ip.interface === ifIndex);
    const addresses: LiveAddress[] = ips.map((ip) => {
      const [address, prefix] = ip.address.split('/') as [string, string];
      const v6 = address.includes(':');
      return { family: v6 ? 6 : 4, address, prefixLen: Number(prefix), scope: iface.name === 'lo' ? 'host' : 'global' };
    });
    const isLo = iface.name === 'lo';
    if (!isLo && iface.mac) addresses.push({ family: 6, address: linkLocal(iface.mac), prefixLen: 64, scope: 'link' });
    interfaces.push({
      name: iface.name,
      ifindex: interfaces.length + 1,
      mac: iface.mac,
      mtu: isLo ? 65536 : 1500,
      state: isLo ? 'UNKNOWN' : 'UP',
      kind: isLo ? undefined : 'veth',
      addresses,
    });
    if (isLo) continue;
    for (const ip of ips) {
      const [address, prefix] = ip.address.split('/') as [string, string];
      if (!address.includes(':'))
        routes.push({
          family: 4,
          dst: `${v4Network(address, Number(prefix))}/${prefix}`,
          dev: iface.name,
          protocol: 'kernel',
          scope: 'link',
        });
    }
    for (const r of result.routes ?? []) {
      const v6 = r.dst.includes(':');
      const gateway = r.gw ?? ips.find((ip) => ip.address.includes(':') === v6)?.gateway;
      routes.push({
        family: v6 ? 6 : 4,
        dst: /^(0\.0\.0\.0|::)\/0$/.test(r.dst) ? 'default' : r.dst,
        gateway,
        dev: iface.name,
        ...(v6 ? { metric: 1024 } : {}),
      });
    }

    const bridge = net?.plugins.find((p) => p.type === 'bridge')?.bridge;
    const bandwidth = hasCapability(net, 'bandwidth', 'bandwidth') ? (a.capabilityArgs?.bandwidth as CniBandwidth | undefined) : undefined;
    for (const host of (result.interfaces ?? []).filter((i) => !i.sandbox)) {
      if (!hostDevices.includes(host.name)) continue;
      const kind = host.name === bridge ? 'bridge' : host.name.startsWith('bwp') ? 'ifb' : 'veth';
      hostLinkKinds[host.name] = kind;
      // tc reports rates in bytes per second and bursts in bytes
      const tbf = (rate: number | undefined, burst: number | undefined) =>
        rate ? [{ kind: 'tbf', rate: rate / 8, burst: Math.floor((burst ?? 0) / 8) }] : [{ kind: 'noqueue' }];
      qdiscs[host.name] =
        kind === 'veth'
          ? tbf(bandwidth?.ingressRate, bandwidth?.ingressBurst)
          : kind === 'ifb'
            ? tbf(bandwidth?.egressRate, bandwidth?.egressBurst)
            : [{ kind: 'noqueue' }];
    }

    const mappings = hasCapability(net, 'portmap', 'portMappings')
      ? ((a.capabilityArgs?.portMappings as CniPortMapping[] | undefined) ?? [])
      : [];
    if (mappings.length > 0) {
      const chain = `CNI-DN-${createHash('sha512').update(`${a.network}${containerId}`).digest('hex').slice(0, 17)}`;
      for (const family of [4, 6] as const) {
        const podIp = ips.map((ip) => ip.address.split('/')[0]!).find((ip) => ip.includes(':') === (family === 6));
        if (!podIp) continue;
        const lines = family === 4 ? nat.v4 : nat.v6;
        const own = mappings.filter((m) => !m.hostIP || m.hostIP.includes(':') === (family === 6));
        if (own.length === 0) continue;
        for (const proto of [...new Set(own.map((m) => m.protocol))]) {
          const ports = own
            .filter((m) => m.protocol === proto)
            .map((m) => m.hostPort)
            .join(',');
          lines.push(
            `-A CNI-HOSTPORT-DNAT -p ${proto} -m comment --comment "dnat name: \\"${a.network}\\" id: \\"${containerId}\\"" -m multiport --dports ${ports} -j ${chain}`,
          );
        }
        for (const m of own) {
          const dest = family === 6 ? `[${podIp}]:${m.containerPort}` : `${podIp}:${m.containerPort}`;
          const d = m.hostIP ? `-d ${m.hostIP}/${family === 6 ? 128 : 32} ` : '';
          lines.push(`-A ${chain} ${d}-p ${m.protocol} -m ${m.protocol} --dport ${m.hostPort} -j DNAT --to-destination ${dest}`);
        }
      }
    }
  }
  return { interfaces, routes, hostLinkKinds, qdiscs, nat, errors: [] };
}

function hasCapability(net: FakeNetwork | undefined, type: string, capability: string): boolean {
  return !!net?.plugins.some((p) => p.type === type && (p.capabilities as Record<string, boolean> | undefined)?.[capability]);
}

/** The EUI-64 link-local address the kernel derives from a MAC. */
function linkLocal(mac: string): string {
  const b = mac.split(':').map((x) => Number.parseInt(x, 16));
  b[0]! ^= 0x02;
  const words = [(b[0]! << 8) | b[1]!, (b[2]! << 8) | 0xff, (0xfe << 8) | b[3]!, (b[4]! << 8) | b[5]!];
  return `fe80::${words.map((w) => w.toString(16)).join(':')}`;
}

function v4Network(address: string, prefix: number): string {
  const n = address.split('.').reduce((acc, o) => (acc << 8) | Number(o), 0) >>> 0;
  const masked = prefix === 0 ? 0 : (n & (~0 << (32 - prefix))) >>> 0;
  return [24, 16, 8, 0].map((s) => (masked >>> s) & 255).join('.');
}
