import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadNetworks, LOOPBACK_CONFLIST } from '../../electron/engine/cni/conf-dir';

/** file name → JSON value, raw text, or null for a directory */
type Tree = Record<string, unknown>;

const list = (name: string, types: string[], extra: Record<string, unknown> = {}) => ({
  cniVersion: '1.0.0',
  name,
  plugins: types.map((type) => ({ type })),
  ...extra,
});

interface Case {
  name: string;
  files: Tree;
  maxConfNum?: number;
  /** expected conf-dir networks as [name, ifName, plugin types, cniVersion?] (lo is checked separately) */
  networks?: Array<[string, string, string[], string?]>;
  /** expected load error (the view is then not ready and holds only lo) */
  error?: RegExp;
  errorSource?: string;
  notReadyReason?: string;
}

const CASES: Case[] = [
  {
    name: 'sorts .conf/.conflist/.json lexicographically, skips other files and directories',
    files: {
      '20-b.conflist': list('b', ['bridge']),
      '10-a.conf': { cniVersion: '0.4.0', name: 'a', type: 'ptp' },
      '05-z.json': { cniVersion: '0.3.1', name: 'z', type: 'macvlan' },
      'notes.txt': 'x',
      '01-dir.conflist': null,
    },
    maxConfNum: 0,
    networks: [
      ['z', 'eth0', ['macvlan'], '0.3.1'],
      ['a', 'eth1', ['ptp'], '0.4.0'],
      ['b', 'eth2', ['bridge'], '1.0.0'],
    ],
  },
  {
    name: 'stops after maxConfNum networks (go-cni default 1)',
    files: { '10-a.conflist': list('a', ['x']), '20-b.conflist': list('b', ['y']), '30-c.conflist': list('c', ['z']) },
    maxConfNum: 2,
    networks: [
      ['a', 'eth0', ['x']],
      ['b', 'eth1', ['y']],
    ],
  },
  {
    name: 'an invalid file after the window does not matter',
    files: { '10-a.conflist': list('a', ['x']), '20-bad.conflist': '{not json' },
    maxConfNum: 1,
    networks: [['a', 'eth0', ['x']]],
  },
  {
    name: 'appends <confdir>/<name>/*.conf plugins after the inline ones',
    files: {
      '10-a.conflist': list('mynet', ['bridge']),
      mynet: null,
      'mynet/2-second.conf': { type: 'bandwidth' },
      'mynet/1-first.conf': { type: 'portmap' },
      'mynet/ignored.json': { type: 'nope' },
    },
    networks: [['mynet', 'eth0', ['bridge', 'portmap', 'bandwidth']]],
  },
  {
    name: 'a list may take all its plugins from the sibling dir',
    files: { '10-a.conflist': { cniVersion: '1.1.0', name: 'side' }, side: null, 'side/a.conf': { type: 'tuning' } },
    networks: [['side', 'eth0', ['tuning'], '1.1.0']],
  },
  {
    name: 'loadOnlyInlinedPlugins (string booleans allowed) ignores the sibling dir',
    files: {
      '10-a.conflist': list('mynet', ['bridge'], { loadOnlyInlinedPlugins: 'TRUE' }),
      mynet: null,
      'mynet/1.conf': { type: 'portmap' },
    },
    networks: [['mynet', 'eth0', ['bridge']]],
  },
  {
    name: 'cniVersions picks the highest version not above 1.1.0, cniVersion joining the vote',
    files: { '10-a.conflist': list('v', ['x'], { cniVersion: '0.4.0', cniVersions: ['0.3.1', '1.0.0', '2.0.0'] }) },
    networks: [['v', 'eth0', ['x'], '1.0.0']],
  },
  {
    name: 'cniVersions with nothing usable keeps cniVersion',
    files: { '10-a.conflist': list('v', ['x'], { cniVersion: '0.3.1', cniVersions: ['2.0.0'] }) },
    networks: [['v', 'eth0', ['x'], '0.3.1']],
  },
  {
    name: 'a conflist without a name',
    files: { '10-a.conflist': { cniVersion: '1.0.0', plugins: [{ type: 'x' }] } },
    error: /^failed to load CNI config list file .*10-a\.conflist: error parsing configuration list: no name: invalid cni config$/,
    errorSource: '10-a.conflist',
  },
  {
    name: 'a network name with bad characters',
    files: { '10-a.conflist': list('bad name', ['x']) },
    error: /invalid network name "bad name"/,
  },
  {
    name: 'an empty plugins array',
    files: { '10-a.conflist': list('a', []) },
    error: /error parsing configuration list: no plugins in list/,
  },
  {
    name: 'a plugin without type',
    files: { '10-a.conflist': { cniVersion: '1.0.0', name: 'a', plugins: [{ bridge: 'x' }] } },
    error: /failed to parse plugin config 0: error parsing configuration: missing 'type'/,
  },
  {
    name: 'a plugin type with a path separator',
    files: { '10-a.conflist': list('a', ['../../bin/sh']) },
    error: /invalid plugin type "\.\.\/\.\.\/bin\/sh"/,
  },
  {
    name: 'a bad boolean string',
    files: { '10-a.conflist': list('a', ['x'], { disableCheck: 'yes' }) },
    error: /invalid value "yes" for disableCheck/,
  },
  {
    name: 'a .conf without type',
    files: { '10-a.conf': { cniVersion: '0.4.0', name: 'a' } },
    error: /^failed to load CNI config file .*10-a\.conf: error parsing configuration: missing 'type': invalid cni config$/,
  },
  {
    name: 'a .conf whose name breaks the rule',
    files: { '10-a.conf': { cniVersion: '0.4.0', type: 'bridge' } },
    error: /^failed to convert CNI config file .*10-a\.conf to CNI config list: .*invalid network name ""/,
  },
  {
    name: 'a sibling plugin without type',
    files: { '10-a.conflist': list('n', ['x']), n: null, 'n/1.conf': { foo: 1 } },
    error: /10-a\.conflist: error parsing configuration: missing 'type'/,
  },
  {
    name: 'an invalid file inside the window fails the whole load',
    files: { '10-a.conflist': list('a', ['x']), '20-b.conflist': '[]' },
    maxConfNum: 0,
    error: /20-b\.conflist: error parsing configuration list: expected a JSON object/,
  },
  {
    name: 'zero files',
    files: { 'readme.md': '#' },
    error: /^no network config found in .*: cni plugin not initialized$/,
    notReadyReason: 'no network config found in <dir>: cni plugin not initialized',
  },
];

describe('conf dir loading (go-cni Load + libcni conf.go)', () => {
  let root: string;
  let confDir: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'psc-cni-conf-'));
    confDir = path.join(root, 'net.d');
    await mkdir(confDir);
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  async function writeTree(tree: Tree): Promise<void> {
    for (const [name, content] of Object.entries(tree)) {
      const full = path.join(confDir, name);
      if (content === null) await mkdir(full, { recursive: true });
      else await writeFile(full, typeof content === 'string' ? content : JSON.stringify(content));
    }
  }

  it.each(CASES)('$name', async (c) => {
    await writeTree(c.files);
    const { networks, view } = await loadNetworks({ confDir, binDirs: [], maxConfNum: c.maxConfNum ?? 1 });
    expect(view.networks[0]).toMatchObject({ name: 'cni-loopback', ifName: 'lo', cniVersion: '0.3.1', builtin: true, source: undefined });
    expect(networks[0]!.list.bytes.toString()).toBe(LOOPBACK_CONFLIST);
    if (c.error) {
      expect(view.ready).toBe(false);
      expect(view.networks).toHaveLength(1);
      expect(view.errors).toHaveLength(1);
      expect(view.errors[0]!.message).toMatch(c.error);
      if (c.errorSource) expect(view.errors[0]!.source).toBe(path.join(confDir, c.errorSource));
      expect(view.notReadyReason).toBe((c.notReadyReason ?? 'cni plugin not initialized').replace('<dir>', confDir));
    } else {
      expect(view.errors).toEqual([]);
      expect(view.ready).toBe(true);
      expect(view.notReadyReason).toBeUndefined();
      const got = view.networks.slice(1).map((n) => [n.name, n.ifName, n.plugins.map((p) => p.type), n.cniVersion]);
      expect(got).toEqual(c.networks!.map(([name, ifName, types, v]) => [name, ifName, types, v ?? '1.0.0']));
    }
  });

  it('reports a missing conf dir like an empty one', async () => {
    const missing = path.join(root, 'nope');
    const { view } = await loadNetworks({ confDir: missing, binDirs: [], maxConfNum: 1 });
    expect(view).toMatchObject({ ready: false, notReadyReason: `no network config found in ${missing}: cni plugin not initialized` });
  });

  it('up-converts a single-plugin conf and keeps every key of the plugin object', async () => {
    await writeTree({ '10-a.conf': { cniVersion: '0.4.0', name: 'single', type: 'bridge', bridge: 'br9', ipam: { type: 'host-local' } } });
    const { networks, view } = await loadNetworks({ confDir, binDirs: [], maxConfNum: 1 });
    const raw = { cniVersion: '0.4.0', name: 'single', type: 'bridge', bridge: 'br9', ipam: { type: 'host-local' } };
    expect(view.networks[1]!.plugins[0]!.raw).toEqual(raw);
    expect(JSON.parse(networks[1]!.list.bytes.toString())).toEqual({ cniVersion: '0.4.0', name: 'single', plugins: [raw] });
  });

  it('keeps the original conflist bytes', async () => {
    const text = '{ "cniVersion": "1.0.0",\n  "name": "keep", "plugins": [ {"type": "x"} ] }\n';
    await writeTree({ '10-a.conflist': text });
    const { networks } = await loadNetworks({ confDir, binDirs: [], maxConfNum: 1 });
    expect(networks[1]!.list.bytes.toString()).toBe(text);
  });

  it('reports declared capabilities and the first regular file found in bin-dir order', async () => {
    const [d1, d2, d3] = ['b1', 'b2', 'b3'].map((d) => path.join(root, d));
    await mkdir(path.join(d1!, 'bridge'), { recursive: true }); // a directory named like the plugin is skipped
    await mkdir(d2!);
    await mkdir(d3!);
    await writeFile(path.join(d2!, 'bridge'), '');
    await writeFile(path.join(d3!, 'bridge'), '');
    await writeTree({
      '10-a.conflist': {
        cniVersion: '1.0.0',
        name: 'a',
        plugins: [{ type: 'bridge', capabilities: { portMappings: true, mac: false, ips: true } }, { type: 'missing' }],
      },
    });
    const { view } = await loadNetworks({ confDir, binDirs: [d1!, d2!, d3!], maxConfNum: 1 });
    expect(view.networks[1]!.plugins.map((p) => [p.capabilities, p.binary])).toEqual([
      [['portMappings', 'ips'], path.join(d2!, 'bridge')],
      [[], undefined],
    ]);
    expect(view.networks[0]!.plugins[0]!.binary).toBeUndefined();
  });

  it('disableCheck accepts real and string booleans', async () => {
    await writeTree({
      '10-a.conflist': list('a', ['x'], { disableCheck: 'True' }),
      '20-b.conflist': list('b', ['x'], { disableCheck: false }),
    });
    const { view } = await loadNetworks({ confDir, binDirs: [], maxConfNum: 0 });
    expect(view.networks.map((n) => n.disableCheck)).toEqual([false, true, false]);
  });
});
