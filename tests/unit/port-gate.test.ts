/**
 * Probes and container starts both want a pod's container ports: the probe's responder binds one when nothing listens
 * there, so a container starting beside a probe could find its port taken and exit. The gate keeps them apart in both
 * orders, while starts still run side by side.
 */
import { describe, expect, it } from 'vitest';
import { PortGate } from '../../electron/engine/service/port-gate';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('PortGate', () => {
  it('holds a container start asked for during a probe until the probe has let go of the ports', async () => {
    const gate = new PortGate();
    const log: string[] = [];
    const probe = deferred();
    const p = gate.withExclusive(async () => {
      log.push('probe:start');
      await probe.promise;
      log.push('probe:end');
    });
    await tick();
    const s = gate.withShared(async () => void log.push('container:start'));
    await tick();
    expect(log).toEqual(['probe:start']);
    probe.resolve();
    await Promise.all([p, s]);
    expect(log).toEqual(['probe:start', 'probe:end', 'container:start']);
  });

  it('holds a probe asked for during a container start until the start has finished, and lets no new start in meanwhile', async () => {
    const gate = new PortGate();
    const log: string[] = [];
    const start = deferred();
    const s1 = gate.withShared(async () => {
      log.push('c1:start');
      await start.promise;
      log.push('c1:end');
    });
    await tick();
    const p = gate.withExclusive(async () => void log.push('probe'));
    await tick();
    const s2 = gate.withShared(async () => void log.push('c2'));
    await tick();
    expect(log).toEqual(['c1:start']);
    start.resolve();
    await Promise.all([s1, p, s2]);
    expect(log).toEqual(['c1:start', 'c1:end', 'probe', 'c2']);
  });

  it('runs container starts side by side and probes one at a time, and a failed probe does not block the next', async () => {
    const gate = new PortGate();
    const a = deferred();
    let running = 0;
    let most = 0;
    const start = () =>
      gate.withShared(async () => {
        most = Math.max(most, ++running);
        await a.promise;
        running--;
      });
    const starts = [start(), start(), start()];
    await tick();
    expect(most).toBe(3);
    a.resolve();
    await Promise.all(starts);

    const order: string[] = [];
    const bad = gate.withExclusive(async () => {
      order.push('p1');
      throw new Error('probe failed');
    });
    const good = gate.withExclusive(async () => void order.push('p2'));
    await expect(bad).rejects.toThrow('probe failed');
    await good;
    expect(order).toEqual(['p1', 'p2']);
    await gate.idle();
  });
});
