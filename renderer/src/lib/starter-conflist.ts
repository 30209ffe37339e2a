/**
 * The conflist a new lab session starts from (the lab's own starter and the CNI page's "New"): a bridge network
 * with its own bridge and subnet, so nothing is shared with a live pod, plus portmap and bandwidth to try the
 * capability args on.
 */
export const STARTER_CONFLIST = JSON.stringify(
  {
    cniVersion: '1.0.0',
    name: 'lab-net',
    plugins: [
      {
        type: 'bridge',
        bridge: 'lab0',
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: '10.99.0.0/24' }]], routes: [{ dst: '0.0.0.0/0' }] },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  },
  null,
  2,
);
