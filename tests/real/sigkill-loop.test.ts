/**
 * SIGKILL loop: an engine in a child process runs, stops and removes a sandbox (bridge + host-local v4/v6 + portmap
 * + bandwidth, runc pause) and is killed with SIGKILL at a random moment; a new engine then starts on the same dirs
 * (start-up recovery and garbage collection), finishes the job with stop/remove, and a leak check scoped to this
 * test's dirs, bridge, subnet and sandbox ids must find nothing.
 *
 * The kill moments come from a seeded generator: the seed is printed, and PODSCOPE_SIGKILL_SEED=<seed> replays the
 * same moments. PODSCOPE_SIGKILL_ROUNDS=N runs more rounds (default 20, sized to stay well under the CI budget).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../electron/engine/index';
import { rmSync, writeFileSync } from 'node:fs';
import { waitForOrphanHelpers } from '../../electron/engine/pods/orphan-helpers';
import { bundleScript } from '../../testkit/bundle-script';
import { ifbDevice } from '../../testkit/leak-check';
import { createScopedEnv, scopedLeaks, sh, type ScopedEnv } from './helpers/scoped-env';

const ROUNDS = Number(process.env.PODSCOPE_SIGKILL_ROUNDS ?? 20);
/**
 * rounds run in this many chains side by side, each on envs of its own (PODSCOPE_SIGKILL_CHAINS): a round is ~2 CPU s
 * over ~8 s of waiting for child engines, runc and the plugins, so four chains fill what two left idle
 */
const CHAINS = Number(process.env.PODSCOPE_SIGKILL_CHAINS ?? 4);
const SEED = Number(process.env.PODSCOPE_SIGKILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** kill moments are drawn in [0, MAX_DELAY_MS) after the child says its engine is ready: run+stop+remove takes ~0.4-0.7 s here */
const MAX_DELAY_MS = 700;
const ROOT = join(__dirname, '../..');
/** share of rounds whose restart is SIGKILLed as well before a last restart finishes the job */
const SECOND_KILL_SHARE = 0.3;

/** mulberry32: tiny, seedable, good enough to spread kill moments */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let env: ScopedEnv;
/** the envs the loop's chains run on (the first is `env`) */
let chainEnvs: ScopedEnv[] = [];
/** the driver, bundled once (testkit/bundle-script.ts): each of the loop's children starts from it */
let driver: string;
beforeAll(async () => {
  [chainEnvs, driver] = await Promise.all([
    Promise.all(Array.from({ length: CHAINS }, (_, c) => createScopedEnv(c === 0 ? 'sk' : `sk${c}`))),
    bundleScript('tests/real/helpers/sigkill-driver.ts'),
  ]);
  env = chainEnvs[0]!;
});
afterAll(async () => {
  for (const e of chainEnvs) await e.cleanup();
  if (driver) rmSync(driver, { force: true });
});

interface Round {
  round: number;
  delayMs: number;
  phase: string;
  secondKill?: { delayMs: number; phase: string };
  gc: string[];
  leaks: string[];
}

/** @returns the last step the child reported before it was killed, and what its start-up collected */
async function killedRun(e: ScopedEnv, round: number, delayMs: number, finish = false): Promise<{ phase: string; gc: string[] }> {
  const input = { options: e.options, name: `sk-${round}`, hostPort: e.port(round % 48), finish };
  const child = spawn(process.execPath, [driver, JSON.stringify(input)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('ready\n')) resolve();
    });
  });
  await Promise.race([ready, exited]);
  if (!out.includes('ready\n')) throw new Error(`round ${round}: the driver exited before its engine was ready:\n${out}\n${err}`);
  await Promise.race([new Promise((r) => setTimeout(r, delayMs)), exited]);
  child.kill('SIGKILL');
  await exited;
  const all = out.trim().split('\n');
  const steps = all.filter((l) => !l.startsWith('gc '));
  return {
    phase: (steps.at(-1) ?? '').split(' ')[0]!,
    gc: all.filter((l) => l.startsWith('gc ')).map((l) => `(killed restart) ${l.slice(3)}`),
  };
}

it('the leak check sees every kind of resource a live sandbox holds (so a leak cannot go unnoticed)', async () => {
  const engine = await createEngine(env.options);
  try {
    const { id } = await engine.run({
      config: {
        metadata: { name: 'probe', namespace: 'sigkill', uid: 'uid-probe' },
        port_mappings: [{ container_port: 80, host_port: env.port(49) }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
      },
    });
    const leaks = scopedLeaks(env, [id]).join('\n');
    for (const kind of [
      'netns file',
      `veth on ${env.bridge}`,
      'host-local reservation',
      'iptables -t nat',
      'ip6tables -t nat',
      'runc container',
      'cni cache file',
      'state record',
      'sandbox dir',
      'sandbox run dir',
      'mount ',
      // the bandwidth plugin's ifb, as the shared checker (findLeftovers) names it
      `interface: ${ifbDevice(env.bridge, id)}`,
    ]) {
      expect(leaks).toContain(kind);
    }
    expect(sh('ip', ['-o', 'link', 'show', ifbDevice(env.bridge, id)])).toContain(ifbDevice(env.bridge, id));
    await engine.remove(id);
    expect(scopedLeaks(env, [id])).toEqual([]);
  } finally {
    await engine.close();
  }
});

describe('helpers a dead engine left running', () => {
  it('a start-up after an unclean shutdown waits for a CNI plugin the dead engine left running before touching the sandbox', async () => {
    const first = await createEngine(env.options);
    const { id } = await first.run({ config: { metadata: { name: 'orphan-plugin', namespace: 'sigkill', uid: 'uid-op' } } });
    await first.close();
    // as if the engine had been SIGKILLed: its pid stays in the lock file, and one of its plugins is still at work
    writeFileSync(join(env.options.stateDir, 'engine.lock'), '999999\n');
    // long enough to still run when the new engine looks, however busy the host (its start-up waits for it to end)
    const plugin = spawn('sleep', ['3'], { env: { ...process.env, CNI_CONTAINERID: id, CNI_COMMAND: 'ADD' }, stdio: 'ignore' });
    const pluginExited = new Promise((r) => plugin.once('exit', r));
    const gc: string[] = [];
    const again = await createEngine(env.options, { log: (l) => gc.push(l) });
    try {
      expect(plugin.exitCode ?? plugin.signalCode).not.toBeNull(); // start-up returned only after it was done
      // its processes only: the same start-up also sweeps what other engines on this host left (a killed trace's
      // rules), which parallel files may have
      expect(((await again.info()).startupGc ?? []).filter((g) => g.kind === 'process')).toEqual([
        expect.objectContaining({
          kind: 'process',
          id: String(plugin.pid),
          action: expect.stringMatching(new RegExp(`^waited \\d+ ms for it to finish .*CNI plugin sleep ADD for sandbox ${id}$`)),
        }),
      ]);
      expect(gc.join('\n')).toContain(`start-up GC: process ${plugin.pid}: waited`);
      await again.remove(id);
    } finally {
      await again.close();
    }
    await pluginExited;
  });

  it('one that does not finish in time is killed; processes of other sandboxes are not looked at', async () => {
    const ours = spawn('sleep', ['30'], { env: { ...process.env, CNI_CONTAINERID: 'a'.repeat(64), CNI_COMMAND: 'DEL' }, stdio: 'ignore' });
    const theirs = spawn('sleep', ['30'], {
      env: { ...process.env, CNI_CONTAINERID: 'b'.repeat(64), CNI_COMMAND: 'ADD' },
      stdio: 'ignore',
    });
    try {
      await new Promise((r) => setTimeout(r, 50));
      const outcomes = await waitForOrphanHelpers(new Set(['a'.repeat(64)]), join(env.options.runDir, 'runc'), 200);
      expect(outcomes.map((o) => [o.pid, o.outcome])).toEqual([[ours.pid, 'killed']]);
      await new Promise((r) => ours.once('exit', r));
      expect(ours.signalCode).toBe('SIGKILL');
      expect(theirs.exitCode ?? theirs.signalCode).toBeNull();
    } finally {
      ours.kill('SIGKILL');
      theirs.kill('SIGKILL');
    }
  });
});

it(
  `survives ${ROUNDS} SIGKILLs at random points of run/stop/remove with nothing leaked (seed printed)`,
  async () => {
    console.log(`sigkill-loop: seed ${SEED} (replay with PODSCOPE_SIGKILL_SEED=${SEED}), ${ROUNDS} rounds in ${CHAINS} chains`);
    // every round's kill moments drawn up front, in the order one chain drew them: a seed replays the same moments
    // however the rounds are spread over the chains
    const random = rng(SEED);
    const plan = Array.from({ length: ROUNDS }, (_, round) => {
      const delayMs = Math.floor(random() * MAX_DELAY_MS);
      const secondDelayMs = random() < SECOND_KILL_SHARE ? Math.floor((random() * MAX_DELAY_MS) / 2) : undefined;
      return { round, delayMs, secondDelayMs };
    });
    const t0 = performance.now();
    // the chains run side by side, each on its own dirs, bridge, subnet and ports (a scoped env of its own): a round
    // spends most of its time waiting for child engines to start and for runc and the plugins
    const chains = await Promise.all(
      chainEnvs.map((e, c) =>
        runChain(
          e,
          plan.filter((p) => p.round % CHAINS === c),
        ),
      ),
    );
    const results = chains.flat().sort((a, b) => a.round - b.round);
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    const phases = results.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.phase]: (acc[r.phase] ?? 0) + 1 }), {});
    const gcCount = results.reduce((n, r) => n + r.gc.length, 0);
    const leaky = results.filter((r) => r.leaks.length > 0);
    const doubles = results.filter((r) => r.secondKill).length;
    console.log(
      `sigkill-loop: seed ${SEED}: ${ROUNDS} rounds in ${seconds} s; killed after ${JSON.stringify(phases)}; ${doubles} restart(s) killed too; start-up GC collected ${gcCount} item(s); ${leaky.length} round(s) leaked`,
    );
    const at = (r: Round) =>
      `+${r.delayMs} ms, after ${r.phase}${r.secondKill ? `; restart killed +${r.secondKill.delayMs} ms after ${r.secondKill.phase}` : ''}`;
    for (const r of results.filter((x) => x.gc.length)) console.log(`  round ${r.round} (${at(r)}): ${r.gc.join(' | ')}`);
    for (const r of leaky) console.log(`  LEAK round ${r.round} (${at(r)}): ${r.leaks.join(' | ')}`);
    expect(results).toHaveLength(ROUNDS);
    expect(leaky.map((r) => ({ round: r.round, at: at(r), leaks: r.leaks }))).toEqual([]);
  },
  Math.max(300_000, ROUNDS * 8_000),
);

/** the rounds of one chain, one after the other on its env: kill, maybe kill the restart, restart, finish, look for leaks */
async function runChain(e: ScopedEnv, rounds: Array<{ round: number; delayMs: number; secondDelayMs?: number }>): Promise<Round[]> {
  const results: Round[] = [];
  const ids = new Set<string>();
  for (const { round, delayMs, secondDelayMs } of rounds) {
    const first = await killedRun(e, round, delayMs);
    const phase = first.phase;
    const gc: string[] = [...first.gc];
    // in some rounds the restart is killed too, somewhere in its recovery, garbage collection or stop/remove
    let secondKill: Round['secondKill'];
    if (secondDelayMs !== undefined) {
      const second = await killedRun(e, round, secondDelayMs, true);
      secondKill = { delayMs: secondDelayMs, phase: second.phase };
      gc.push(...second.gc);
    }
    // restart: a new engine on the same dirs recovers, collects, and finishes what the killed one left
    const engine = await createEngine(e.options, { log: (l) => gc.push(l) }).catch((err: unknown) => {
      throw new Error(
        `round ${round} (+${delayMs} ms after ${phase}${secondKill ? `; restart killed +${secondKill.delayMs} ms after ${secondKill.phase}` : ''}): restart failed: ${(err as Error).message}`,
        { cause: err },
      );
    });
    try {
      for (const s of await engine.list()) {
        ids.add(s.id);
        await engine.stop(s.id);
        await engine.remove(s.id);
      }
      expect(await engine.list()).toEqual([]);
    } finally {
      await engine.close();
    }
    // every sandbox the chain saw, its ifb included (the shared checker's interfaces)
    const leaks = scopedLeaks(e, ids);
    results.push({ round, delayMs, phase, secondKill, gc, leaks });
  }
  return results;
}
