/**
 * The host side's probe agent is kept between probes: real agents (`node -e` in this process's netns, no root, no
 * namespace switch), driven through LinuxProbeNet as a probe drives them. What is kept has its responders closed;
 * what is ended is gone by pid. (An agent in a pod's netns is never kept: tests/real/probe-real.test.ts checks that
 * nothing but the pause is left in a pod's netns after each probe.)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { endKeptProbeAgents, LinuxProbeNet } from '../../electron/engine/netns/linux-probe-net';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { processExists as alive } from '../../electron/engine/common/proc';
import { until } from '../../testkit/until';

const net = new LinuxProbeNet(new NodeProcessRunner());
/** whether this process can listen on 127.0.0.1:port now (a responder left open would hold it) */
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1' }, () => s.close(() => resolve(true)));
  });

afterEach(async () => {
  await endKeptProbeAgents();
});

describe('the host-side probe agent kept between probes', () => {
  it('is handed to the next probe (same pid) with the first probe’s responder closed', async () => {
    const first = await net.open(undefined);
    const port = await first.respond(0, 'podscope-keep-test', '127.0.0.1');
    expect(await first.connect('127.0.0.1', port, 2000, 500)).toMatchObject({ kind: 'connected', banner: 'podscope-keep-test' });
    const pid = first.pid!;
    await first.close();

    expect(alive(pid)).toBe(true);
    expect(await portFree(port)).toBe(true);
    const second = await net.open(undefined);
    expect(second.pid).toBe(pid);
    expect(await second.connect('127.0.0.1', port, 2000, 500)).toMatchObject({ kind: 'refused' });
    await second.close();
  });

  it('a closed lease refuses further use: its agent may already serve another probe', async () => {
    const lease = await net.open(undefined);
    await lease.close();
    await expect(lease.listeners()).rejects.toThrow(/used after its probe closed it/);
    // and closing it twice does not keep the agent twice
    await lease.close();
    const [a, b] = await Promise.all([net.open(undefined), net.open(undefined)]);
    expect(a.pid).not.toBe(b.pid);
    await Promise.all([a.close(), b.close()]);
  });

  it('starts with PATH and its own lifetime variable, not the engine’s NODE_OPTIONS or CA bundle', async () => {
    // Node acts on these at every start (a loader preloaded; the CA bundle read and parsed: ~100 ms CPU per agent)
    const saved = { ...process.env };
    Object.assign(process.env, {
      NODE_OPTIONS: '--max-old-space-size=64',
      NODE_EXTRA_CA_CERTS: '/nonexistent/ca.pem',
      PODSCOPE_PROBE_LIFETIME_MS: '30000',
    });
    try {
      const agent = await net.open(undefined);
      const environ = readFileSync(`/proc/${agent.pid!}/environ`, 'utf8').split('\0').filter(Boolean);
      await agent.close();
      const names = environ.map((e) => e.slice(0, e.indexOf('='))).sort();
      expect(names).toEqual(['ELECTRON_RUN_AS_NODE', 'PATH', 'PODSCOPE_PROBE_LIFETIME_MS']);
      expect(environ).toContain('PODSCOPE_PROBE_LIFETIME_MS=30000');
    } finally {
      for (const k of ['NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'PODSCOPE_PROBE_LIFETIME_MS']) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  it('probes side by side each get an agent of their own', async () => {
    const [a, b] = await Promise.all([net.open(undefined), net.open(undefined)]);
    expect(a.pid).not.toBe(b.pid);
    await Promise.all([a.close(), b.close()]);
  });

  it('is ended by dispose (an engine’s shutdown) and when it waited too long', async () => {
    const lease = await net.open(undefined);
    const pid = lease.pid!;
    await lease.close();
    expect(alive(pid)).toBe(true);
    await net.dispose();
    expect(alive(pid)).toBe(false);

    const next = await net.open(undefined);
    const nextPid = next.pid!;
    expect(nextPid).not.toBe(pid);
    await next.close();
    // ended by its own timer after KEEP_HOST_AGENT_MS with nobody asking
    await until(() => !alive(nextPid), { timeout: 10_000, what: 'the kept agent to end on its own' });
  });
});
