/**
 * `podscope lab run` on a conflist the plugins would misread refuses it before any plugin runs and exits 2
 * (InvalidArgument), naming every problem at FILE:LINE:COLUMN: a misspelt bridge key (with the key it meant) and a
 * prefix longer than the address. Root only (the CLI opens a real engine on throwaway dirs). Bridge, network name
 * and subnet from the test kit's allocator (a lease), dirs under the temp dir.
 */
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labDirs } from './helpers/lab-dirs';
import { podscope } from './helpers/podscope-cli';
import { leaseHost } from '../../testkit/allocator';
import { findLeftovers, formatLeftovers } from '../../testkit/leak-check';

const lease = leaseHost('lab-refuse-cli-real');
const BRIDGE = lease.name('-lab');
const SUBNET = lease.subnet4(0);
// the subnet with a prefix longer than an IPv4 address: 10.<octet>.0.0/33
const BAD_SUBNET = SUBNET.replace(/\/24$/, '/33');
const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge');

const cli = (args: string[]) => podscope(...args);

describe.skipIf(!canRun)('podscope lab run refuses a conflist the plugins would misread', () => {
  const dirs = labDirs({ bridge: BRIDGE, subnet: SUBNET, network: BRIDGE });
  beforeAll(async () => {
    await dirs.create(join(tmpdir(), `podscope-${BRIDGE}-`));
  });
  afterAll(async () => {
    await dirs.destroy();
    lease.release();
  });

  it('exits 2 with every problem at its line and column, and runs nothing', async () => {
    const file = join(dirs.dir, 'bad.conflist');
    const lines = [
      '{',
      '  "cniVersion": "1.0.0",',
      `  "name": "${BRIDGE}",`,
      '  "plugins": [',
      `    { "type": "bridge", "bridge": "${BRIDGE}", "hairpin": true,`,
      `      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "${BAD_SUBNET}" }]] } }`,
      '  ]',
      '}',
      '',
    ];
    await writeFile(file, lines.join('\n'));
    const col = (line: number, what: string) => lines[line - 1]!.indexOf(what) + 1;
    const o = dirs.options();
    const flags = ['--state-dir', o.stateDir, '--run-dir', o.runDir, '--netns-dir', o.netnsDir, '--cni-conf-dir', o.cniConfDir];
    const r = await cli([
      'lab',
      'run',
      file,
      '--bandwidth',
      '5M',
      ...flags,
      '--cni-bin-dir',
      '/usr/lib/cni',
      '--cni-cache-dir',
      o.cniCacheDir,
    ]);
    expect(r.stderr).toContain('nothing was run');
    expect(r.stderr).toContain(
      `${file}:5:${col(5, '"hairpin"')}: plugins.0.hairpin: bridge: unknown key "hairpin" (did you mean hairpinMode?)`,
    );
    expect(r.stderr).toContain(
      `${file}:6:${col(6, `"${BAD_SUBNET}"`)}: plugins.0.ipam.ranges.0.0.subnet: host-local: "${BAD_SUBNET}": the prefix length must be 0-32`,
    );
    expect(r.code).toBe(2);
    // nothing ran: no bridge, no lab run kept, no namespace
    expect(existsSync(`/sys/class/net/${BRIDGE}`)).toBe(false);
    const runs = join(o.stateDir, 'lab', 'runs');
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
    const left = findLeftovers(dirs.scope());
    expect(left, formatLeftovers(left)).toEqual([]);
  });
});
