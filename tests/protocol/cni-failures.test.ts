import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { PodscopeError } from '../../shared/domain/errors';
import { FakeCniSandbox } from './fake-cni-sandbox';

const ID = 'f00dbabe';
const NETNS = '/var/run/netns/cni-fake-fail';
const OPTS = { args: [] as Array<[string, string]>, capabilities: {} };
const TYPES = ['p0', 'p1', 'p2'];

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

describe('CNI plugin failures against fake plugins', () => {
  let box: FakeCniSandbox;
  beforeEach(async () => {
    box = await FakeCniSandbox.create(TYPES);
  });
  afterEach(async () => box.dispose());

  /** a three-plugin list where plugin `at` does `add` (and every plugin may get a `del` behaviour) */
  async function managerWith(at: number, add: Record<string, unknown>, del?: Record<string, unknown>) {
    await box.writeConflist(
      '10-f.conflist',
      'failnet',
      '1.0.0',
      TYPES.map((type, i) => ({ type, fake: { ...(i === at ? { add } : {}), ...(del ? { del } : {}) } })),
    );
    const mgr = box.manager();
    await mgr.load();
    return mgr;
  }

  const cacheFile = () => path.join(box.cacheDir, 'results', `failnet-${ID}-eth0`);

  /**
   * After a failed ADD no complete result is cached; the chain's result as far as it got is, marked incompleteAdd, for
   * the DEL that follows (docs/semantics.md#del-after-failed-add) — nothing when the first plugin failed.
   */
  async function expectIncompleteCache(failedAt: number, failedType = `p${failedAt}`): Promise<void> {
    if (failedAt === 0) {
      expect(await exists(cacheFile())).toBe(false);
      return;
    }
    const doc = JSON.parse(await readFile(cacheFile(), 'utf8')) as { incompleteAdd?: unknown };
    expect(doc.incompleteAdd).toEqual({
      failedIndex: failedAt,
      failedType,
      resultIndex: failedAt - 1,
      resultType: `p${failedAt - 1}`,
    });
  }

  async function addError(at: number, add: Record<string, unknown>, hooks = box.hooks()): Promise<PodscopeError> {
    const mgr = await managerWith(at, add);
    const err = (await mgr.setup(ID, NETNS, OPTS, hooks).then(
      () => undefined,
      (e: unknown) => e,
    )) as PodscopeError;
    expect(err).toBeDefined();
    expect(err.code).toBe('CniError');
    return err;
  }

  it.each([
    [
      'CNI error JSON without cniVersion',
      { stdout: '{"code":7,"msg":"invalid config","details":"bridge name too long"}', stderr: 'log line', exit: 1 },
      'plugin type="p1" failed (add): invalid config; bridge name too long',
      { cniCode: 7, cniMsg: 'invalid config', cniDetails: 'bridge name too long', exitCode: 1, stderr: 'log line' },
    ],
    [
      'CNI error JSON with cniVersion',
      { stdout: '{"cniVersion":"1.1.0","code":11,"msg":"try again"}', exit: 1 },
      'plugin type="p1" failed (add): try again',
      { cniCode: 11, cniMsg: 'try again' },
    ],
    [
      'a bare non-zero exit with stderr',
      { stderr: 'boom: no bridge\n', exit: 3 },
      'plugin type="p1" failed (add): netplugin failed: "boom: no bridge\\n": exit status 3',
      { exitCode: 3, stderr: 'boom: no bridge\n' },
    ],
    [
      'a bare non-zero exit without output',
      { exit: 2 },
      'plugin type="p1" failed (add): netplugin failed with no error message: exit status 2',
      { exitCode: 2 },
    ],
    [
      'an unparseable diagnostic',
      { stdout: 'oops', exit: 1 },
      'plugin type="p1" failed (add): netplugin failed but error parsing its diagnostic message "oops"',
      { exitCode: 1 },
    ],
    ['a result that is not JSON', { stdout: 'garbage{' }, 'plugin type="p1" failed (add): failed to unmarshal raw result', { exitCode: 0 }],
    [
      'a result with a bad address',
      { result: { cniVersion: '1.0.0', ips: [{ address: '10.0.0.300/24' }] } },
      'plugin type="p1" failed (add): ips[0].address: invalid CIDR address: 10.0.0.300/24',
      { exitCode: 0 },
    ],
    [
      'a result of an unknown version',
      { result: { cniVersion: '9.9.9' } },
      'plugin type="p1" failed (add): unsupported CNI result version "9.9.9"',
      {},
    ],
  ])('%s becomes a CniError with the plugin facts', async (_name, add, message, details) => {
    const err = await addError(1, add);
    expect(err.message.slice(0, message.length)).toBe(message);
    expect(err.details).toMatchObject({ network: 'failnet', ifName: 'eth0', plugin: 'p1', verb: 'ADD', index: 1, ...details });
    await expectIncompleteCache(1);
    const rec = box.records.find((r) => r.plugin?.type === 'p1')!;
    expect(rec.ok).toBe(false);
    expect(rec.error).toBe(err);
  });

  it.each([0, 1, 2])('a failure at position %i stops the list and leaves no cache file; remove then cleans everything', async (at) => {
    const mgr = await managerWith(at, { stdout: '{"code":999,"msg":"nope"}', exit: 1 });
    await expect(mgr.setup(ID, NETNS, OPTS, box.hooks())).rejects.toThrow(`plugin type="p${at}" failed (add): nope`);
    expect((await box.log()).map((e) => e.type)).toEqual(TYPES.slice(0, at + 1));
    await expectIncompleteCache(at);
    // the lo network succeeded in parallel and is cached (and failnet's chain as far as it got); remove clears both
    expect(await mgr.cachedAttachments(ID)).toEqual([
      path.join(box.cacheDir, 'results', `cni-loopback-${ID}-lo`),
      ...(at > 0 ? [cacheFile()] : []),
    ]);
    await box.clearLog();
    await mgr.remove(ID, NETNS, OPTS, box.hooks());
    expect((await box.log()).map((e) => e.type)).toEqual(['p2', 'p1', 'p0']);
    expect(await mgr.cachedAttachments(ID)).toEqual([]);
  });

  it('a hung plugin is killed at the timeout and the error says so', async () => {
    await box.installPlugin('hang');
    await box.writeConflist('10-f.conflist', 'failnet', '1.0.0', [{ type: 'p0' }, { type: 'hang' }, { type: 'p2' }]);
    const mgr = box.manager();
    await mgr.load();
    // 2 s, not less: on a loaded host (load 15 on 2 cores) starting a fake plugin alone can take 300 ms
    const err = (await mgr.setup(ID, NETNS, OPTS, box.hooks({ pluginTimeoutMs: 2000 })).catch((e: unknown) => e)) as PodscopeError;
    expect(err.message).toBe('plugin type="hang" failed (add): netplugin timed out after 2000 ms and was killed');
    expect(err.details).toMatchObject({ timedOut: true, plugin: 'hang', index: 1 });
    expect(box.records.find((r) => r.plugin?.type === 'hang')!.plugin).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect((await box.log()).map((e) => e.type)).toEqual(['p0']);
    await expectIncompleteCache(1, 'hang');
  });

  it('an AbortSignal kills the running plugin', async () => {
    const ac = new AbortController();
    // abort once the hanging plugin has logged its start, so the kill hits p2 and not an earlier plugin
    const poll = setInterval(() => void box.log().then((l) => l.some((e) => e.type === 'p2') && ac.abort()), 50);
    onTestFinished(() => clearInterval(poll));
    const err = await addError(2, { hang: true }, box.hooks({ signal: ac.signal }));
    expect(err.message).toBe('plugin type="p2" failed (add): netplugin was canceled and killed');
    expect(err.details).toMatchObject({ canceled: true, timedOut: false });
    await expectIncompleteCache(2);
  });

  it('a missing binary fails like libcni FindInPath, without exec', async () => {
    await box.writeConflist('10-f.conflist', 'failnet', '1.0.0', [{ type: 'p0' }, { type: 'absent' }]);
    const mgr = box.manager();
    const view = await mgr.load();
    expect(view.networks[1]!.plugins.map((p) => p.binary)).toEqual([path.join(box.binDir, 'p0'), undefined]);
    await expect(mgr.setup(ID, NETNS, OPTS, box.hooks())).rejects.toThrow(
      `plugin type="absent" failed (add): failed to find plugin "absent" in path [${box.binDir}]`,
    );
    expect(box.records.find((r) => r.plugin?.type === 'absent')!.plugin).toMatchObject({ binary: undefined, exitCode: null });
  });

  it('an invalid container id is refused before any plugin runs', async () => {
    const mgr = await managerWith(-1, {});
    await expect(mgr.setup('../etc', NETNS, OPTS, box.hooks())).rejects.toMatchObject({
      code: 'CniError',
      message: expect.stringContaining('invalid characters in containerID; ../etc'),
    });
    await expect(mgr.remove('', NETNS, OPTS, box.hooks())).rejects.toThrow('missing containerID');
    expect(await box.log()).toEqual([]);
  });

  it('remove tolerates "not found" errors and keeps going', async () => {
    // two networks (eth0, eth1); every plugin of the first answers DEL with "not found" (it already cleaned up)
    const notFound = { del: { stdout: '{"code":3,"msg":"container not found"}', exit: 1 } };
    await box.writeConflist(
      '10-f.conflist',
      'failnet',
      '1.0.0',
      TYPES.map((type) => ({ type, fake: notFound })),
    );
    await box.writeConflist('20-s.conflist', 'second', '1.0.0', [{ type: 'p0' }, { type: 'p1' }]);
    const mgr = box.manager({ maxConfNum: 2 });
    await mgr.load();
    await mgr.setup(ID, NETNS, OPTS, box.hooks());
    const secondCache = path.join(box.cacheDir, 'results', `second-${ID}-eth1`);
    expect(await exists(secondCache)).toBe(true);
    await box.clearLog();
    await expect(mgr.remove(ID, NETNS, OPTS, box.hooks())).resolves.toBeUndefined();
    const dels = (await box.log()).filter((e) => e.verb === 'DEL').map((e) => `${e.conf.name}/${e.type}`);
    // every plugin of the first network still gets its DEL (Podscope goes past a failing DEL so no plugin's resources
    // are stranded, where libcni stops the list), and the other network is deleted too, each list in reverse (the
    // networks themselves are released at once, so only the order within a list is fixed)
    expect(dels.filter((d) => d.startsWith('failnet/'))).toEqual(['failnet/p2', 'failnet/p1', 'failnet/p0']);
    expect(dels.filter((d) => d.startsWith('second/'))).toEqual(['second/p1', 'second/p0']);
    expect(dels).toHaveLength(5);
    expect(await exists(secondCache)).toBe(false);
  });

  it('remove tolerates "no such file or directory" only when the netns path is empty', async () => {
    const mgr = await managerWith(-1, {}, { stderr: 'open /proc/x/ns/net: no such file or directory', exit: 1 });
    await expect(mgr.remove(ID, '', OPTS, box.hooks())).resolves.toBeUndefined();
    await expect(mgr.remove(ID, NETNS, OPTS, box.hooks())).rejects.toThrow('no such file or directory');
  });

  it('remove keeps going past a failing plugin (libcni stops; Podscope continues so the others release what they hold) and names what is left', async () => {
    const mgr = await managerWith(-1, {});
    await mgr.setup(ID, NETNS, OPTS, box.hooks());
    await box.writeConflist(
      '10-f.conflist',
      'failnet',
      '1.0.0',
      TYPES.map((type, i) => ({ type, fake: i === 1 ? { del: { stdout: '{"code":999,"msg":"iptables busy"}', exit: 1 } } : {} })),
    );
    await mgr.load();
    await box.clearLog();
    const err = (await mgr.remove(ID, NETNS, OPTS, box.hooks()).catch((e: unknown) => e)) as PodscopeError;
    expect(err.message).toBe('failed to remove network "failnet" (eth0): plugin type="p1" failed (delete): iptables busy');
    expect(err.details).toMatchObject({
      network: 'failnet',
      ifName: 'eth0',
      pending: [{ network: 'failnet', ifName: 'eth0', index: 1, type: 'p1' }],
    });
    expect((await box.log()).map((e) => e.type)).toEqual(['p2', 'p1', 'p0']);
    // the DEL did not complete, so its cache entry stays for the next attempt
    expect(await exists(cacheFile())).toBe(true);
  });

  it('a DEL scope runs only what it names: after an incomplete ADD the executed plugins, on a retry the plugins left', async () => {
    const mgr = await managerWith(-1, {});
    await box.clearLog();
    await mgr.remove(ID, NETNS, OPTS, box.hooks(), { executedOnAdd: { 'failnet/eth0': [0, 1] } });
    expect((await box.log()).map((e) => e.type)).toEqual(['p1', 'p0']); // lo and p2 never ran: not DELed
    await box.clearLog();
    await mgr.remove(ID, NETNS, OPTS, box.hooks(), { only: [{ network: 'failnet', ifName: 'eth0', index: 2, type: 'p2' }] });
    expect((await box.log()).map((e) => e.type)).toEqual(['p2']);
  });

  it('a hanging DEL is killed at the timeout, the plugins after it still run, and it is reported as pending (timedOut)', async () => {
    await box.installPlugin('hang');
    await box.writeConflist('10-f.conflist', 'failnet', '1.0.0', [{ type: 'p0' }, { type: 'hang' }, { type: 'p2' }]);
    const mgr = box.manager();
    await mgr.load();
    await box.clearLog();
    // 2 s: far above what a fake plugin takes even on a loaded host, so only the hanging one times out
    const err = (await mgr.remove(ID, NETNS, OPTS, box.hooks({ pluginTimeoutMs: 2000 })).catch((e: unknown) => e)) as PodscopeError;
    expect(err.message).toMatch(
      /^failed to remove network "failnet" \(eth0\): plugin type="hang" failed \(delete\): netplugin timed out after 2000 ms/,
    );
    expect(err.details).toMatchObject({ pending: [{ network: 'failnet', ifName: 'eth0', index: 1, type: 'hang', timedOut: true }] });
    expect((await box.log()).map((e) => e.type)).toEqual(['p2', 'p0']);
  });
});
