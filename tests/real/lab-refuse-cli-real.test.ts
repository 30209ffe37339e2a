/**
 * `podscope lab run` on a conflist the plugins would misread refuses it before any plugin runs and exits 2
 * (InvalidArgument), naming every problem at FILE:LINE:COLUMN: a misspelt bridge key (with the key it meant) and a
 * prefix longer than the address. Root only (the CLI opens a real engine on throwaway dirs). Names: bridge
 * ux170-lab, subnet 10.170.0.0/24, dirs under /tmp/podscope-ux170-*.
 */
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labDirs } from './helpers/lab-dirs';
import { podscope } from './helpers/podscope-cli';
import { findLeftovers, formatLeftovers } from '../../testkit/leak-check';

const BRIDGE = 'ux170-lab';
const canRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge');

const cli = (args: string[]) => podscope(...args);

describe.skipIf(!canRun)('podscope lab run refuses a conflist the plugins would misread', () => {
  const dirs = labDirs({ bridge: BRIDGE, subnet: '10.170.0.0/24', network: 'ux170-lab' });
  beforeAll(async () => {
    await dirs.create('/tmp/podscope-ux170-');
  });
  afterAll(async () => {
    await dirs.destroy();
  });

  it('exits 2 with every problem at its line and column, and runs nothing', async () => {
    const file = join(dirs.dir, 'bad.conflist');
    const lines = [
      '{',
      '  "cniVersion": "1.0.0",',
      '  "name": "ux170-lab",',
      '  "plugins": [',
      `    { "type": "bridge", "bridge": "${BRIDGE}", "hairpin": true,`,
      '      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "10.170.0.0/33" }]] } }',
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
      `${file}:6:${col(6, '"10.170.0.0/33"')}: plugins.0.ipam.ranges.0.0.subnet: host-local: "10.170.0.0/33": the prefix length must be 0-32`,
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
