/**
 * `podscope pods` opens the engine to list what its state dir holds and nothing more: the host check's runs of each
 * runtime handler's `--version` (a third of the verb's start-up) are skipped, while a read-only engine for any other
 * verb still makes them, and a writable engine cannot skip them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../electron/engine/index';
import { ScriptedRunner } from '../../testkit/fakes/scripted-runner';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function options() {
  const dir = await mkdtemp(join(tmpdir(), 'podscope-list-only-'));
  dirs.push(dir);
  return {
    stateDir: join(dir, 'state'),
    runDir: join(dir, 'run'),
    netnsDir: join(dir, 'netns'),
    cniConfDir: join(dir, 'net.d'),
    cniCacheDir: join(dir, 'cni-cache'),
    probeOnReady: false,
  };
}

const versionRuns = (runner: ScriptedRunner) => runner.lines.filter((l) => l.endsWith(' --version'));

describe('an engine that only lists', () => {
  it('runs no runtime --version and reports no handlers when the host check is skipped', async () => {
    const runner = new ScriptedRunner();
    const engine = await createEngine(await options(), { readOnly: true, skipHostCheck: true, runner, log: () => {} });
    try {
      expect(await engine.list({})).toEqual([]);
      expect(versionRuns(runner)).toEqual([]);
      expect((await engine.info()).runtimeHandlers).toBeUndefined();
    } finally {
      await engine.close();
    }
  });

  it('a read-only engine for the other verbs still checks the host', async () => {
    const runner = new ScriptedRunner();
    const engine = await createEngine(await options(), { readOnly: true, runner, log: () => {} });
    try {
      expect(versionRuns(runner).length).toBeGreaterThan(0);
      expect((await engine.info()).runtimeHandlers?.length).toBeGreaterThan(0);
    } finally {
      await engine.close();
    }
  });

  it('a writable engine cannot skip the host check', async () => {
    await expect(createEngine(await options(), { skipHostCheck: true, runner: new ScriptedRunner(), noLock: true })).rejects.toThrow(
      /read-only/,
    );
  });
});
