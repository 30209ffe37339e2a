/**
 * Readiness that matches what a run would do: files beyond max networks are reported as skipped (with whether they
 * would load at all), a loaded network whose plugin binary is missing makes status() fail naming the plugin, the
 * network and the file, and the engine's preview says where the run would fail.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadNetworks } from '../../electron/engine/cni/conf-dir';
import { createCniManager } from '../../electron/engine/cni/cni-manager';
import { missingPluginText } from '../../shared/domain/cni';

let root: string;
let confDir: string;
let binDir: string;
const list = (name: string, types: string[]) => JSON.stringify({ cniVersion: '1.0.0', name, plugins: types.map((type) => ({ type })) });

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'podscope-u1-ready-'));
  confDir = path.join(root, 'net.d');
  binDir = path.join(root, 'bin');
  await mkdir(confDir);
  await mkdir(binDir);
  for (const t of ['loopback', 'bridge']) {
    await writeFile(path.join(binDir, t), '#!/bin/sh\nexit 0\n');
    await chmod(path.join(binDir, t), 0o755);
  }
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('conf dir: what was skipped and why', () => {
  it('files after max networks are skipped, and a broken one says it would not load anyway', async () => {
    await writeFile(path.join(confDir, '10-a.conflist'), list('a', ['bridge']));
    await writeFile(path.join(confDir, '20-b.conflist'), list('b', ['bridge']));
    await writeFile(path.join(confDir, '30-bad.conflist'), '{not json');
    const { view } = await loadNetworks({ confDir, binDirs: [binDir], maxConfNum: 1 });
    expect(view.ready).toBe(true);
    expect(view.networks.map((n) => n.name)).toEqual(['cni-loopback', 'a']);
    expect(view.skipped).toEqual([
      {
        source: path.join(confDir, '20-b.conflist'),
        reason: 'skipped: only the first 1 network in the conf dir is used (max networks 1); network "b" is not attached',
      },
      {
        source: path.join(confDir, '30-bad.conflist'),
        reason: expect.stringMatching(
          /^skipped: only the first 1 network in the conf dir is used \(max networks 1\); it would not load anyway: failed to load CNI config list file .*30-bad\.conflist/,
        ),
      },
    ]);
    // go-cni never read them, so they are not load errors
    expect(view.errors).toEqual([]);
  });

  it('with max networks 0 (all) nothing is skipped', async () => {
    await writeFile(path.join(confDir, '10-a.conflist'), list('a', ['bridge']));
    await writeFile(path.join(confDir, '20-b.conflist'), list('b', ['bridge']));
    const { view } = await loadNetworks({ confDir, binDirs: [binDir], maxConfNum: 0 });
    expect(view.skipped).toBeUndefined();
  });
});

describe('a plugin binary that does not exist', () => {
  it('is listed in the view and makes status() fail with the plugin, the network and the file', async () => {
    const file = path.join(confDir, '10-a.conflist');
    await writeFile(file, list('a', ['bridge', 'no-such-plugin']));
    const mgr = createCniManager({ confDir, binDirs: [binDir], cacheDir: path.join(root, 'cache'), maxConfNum: 1 });
    const view = await mgr.load();
    // go-cni's own readiness (lo + one network) holds; the binary check is ours
    expect(view.ready).toBe(true);
    expect(view.missingPlugins).toEqual([{ network: 'a', source: file, type: 'no-such-plugin', index: 1 }]);
    await expect(mgr.status()).rejects.toMatchObject({
      code: 'CniError',
      message: `plugin "no-such-plugin" (network "a", file ${file}): not found in bin dirs [${binDir}]`,
      details: { type: 'no-such-plugin', source: file, network: 'a' },
    });
    // installing the plugin is enough: status looks again, no reload needed
    await writeFile(path.join(binDir, 'no-such-plugin'), '#!/bin/sh\nexit 0\n');
    await expect(mgr.status()).resolves.toBeUndefined();
  });

  it('the preview marks the plugin, and the text names plugin, network and file', async () => {
    const file = path.join(confDir, '10-a.conflist');
    await writeFile(file, list('a', ['bridge', 'nope']));
    const mgr = createCniManager({ confDir, binDirs: [binDir], cacheDir: path.join(root, 'cache'), maxConfNum: 1 });
    await mgr.load();
    const nope = mgr.preview({ args: [], capabilities: {} }).find((p) => p.type === 'nope')!;
    expect(nope).toMatchObject({ binaryFound: false, source: file, network: 'a' });
    expect(missingPluginText({ ...nope }, [binDir, '/opt/cni/bin'])).toBe(
      `plugin "nope" (network "a", file ${file}): not found in bin dirs [${binDir} /opt/cni/bin]`,
    );
  });
});
