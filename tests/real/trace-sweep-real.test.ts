/**
 * What a killed trace leaves, and the next start's sweep: a `podscope probe --trace` killed midway (SIGKILL) leaves its
 * TRACE rules, raw tables and `nft monitor trace` processes until an engine starts, which removes and reports them;
 * rules and tracefs instances of an engine whose pid is gone are removed too, a live engine's are kept. Real netns,
 * Debian's bridge/host-local/portmap plugins, real netfilter; subnets, bridge and host port from the test kit's
 * allocator (a lease).
 *
 * It runs alone (vitest project real-alone): any engine starting meanwhile would sweep the killed trace's rules before
 * this file looks for them, and the host's raw tables are compared whole. The other trace tests, which compare only
 * what carries their own engine's mark on the host, run beside the other files (trace-real.test.ts).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orphanTraceMonitors, TRACE_MONITOR_ENV } from '../../electron/engine/kernel/netfilter-trace';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { hostRawTables } from '../../testkit/host-cleanup';
import { traceTablesOf } from '../../testkit/netns-snapshot';
import { until } from '../../testkit/until';
import type { RealEnv } from '../../testkit/throwaway-env';
import { cliFlagsOf, startTracedPod } from './helpers/traced-pod';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const ip4 = (args: string[]) => sh('iptables', args);

let env: RealEnv;
let engine: SandboxEngine;
let a: string;
let netnsA: string;
let podIp4: string;

beforeAll(async () => {
  ({ env, engine, id: a, netnsPath: netnsA, podIp4 } = await startTracedPod('trs'));
});

afterAll(async () => {
  await env?.teardown();
});

describe('after a kill: what is left, and the sweep at the next start', () => {
  it('a trace killed midway (SIGKILL) leaves its rules and monitors only until the next start', async () => {
    await engine.close();
    const flags = cliFlagsOf(env);
    const rule = ['OUTPUT', '-d', `${podIp4}/32`, '-p', 'tcp', '--dport', '8080', '-m', 'comment', '--comment', 'fw-block', '-j', 'DROP'];
    const rawAll = () =>
      [
        sh('iptables', ['-t', 'raw', '-S']),
        sh('ip6tables', ['-t', 'raw', '-S']),
        sh('nsenter', [`--net=${netnsA}`, 'iptables', '-t', 'raw', '-S']),
        sh('nsenter', [`--net=${netnsA}`, 'ip6tables', '-t', 'raw', '-S']),
      ].join('');
    const before = traceTablesOf(netnsA);
    ip4(['-I', ...rule]);
    let cliPid = 0;
    try {
      // the DROP makes the host-port connects wait their full timeout: time enough to kill the engine mid-trace
      const child = spawn(process.execPath, ['bin/podscope.mjs', 'probe', a, '--trace', ...flags], {
        cwd: join(__dirname, '../..'),
        stdio: 'ignore',
      });
      cliPid = child.pid!;
      let seen = false;
      for (let i = 0; i < 300 && !seen; i++) {
        await new Promise((r) => setTimeout(r, 100));
        seen =
          rawAll().includes(`podscope-trace pid=${cliPid}`) && orphanTraceMonitors(-1, () => false).some((m) => m.enginePid === cliPid);
      }
      expect(seen, 'the trace started (rules and monitors)').toBe(true);
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(cliPid, 'SIGKILL');
      await exited;
    } finally {
      ip4(['-D', ...rule]);
    }
    // left behind by the kill
    expect(rawAll()).toContain(`podscope-trace pid=${cliPid}`);
    expect(sh('nsenter', [`--net=${netnsA}`, 'nft', 'list', 'table', 'ip', 'raw'])).toContain(`comment "podscope-trace pid=${cliPid}"`);
    // its `nft monitor trace` processes are left too, or already gone by themselves: the first event one writes after
    // the kill meets a closed pipe (SIGPIPE), and whether a retransmitted SYN of the dropped connect came first is
    // timing. The sweep of a monitor that is left is proven below with one planted for a dead engine.
    engine = await env.engine({ probeOnReady: false });
    const gc = (await engine.info()).startupGc ?? [];
    expect(gc.filter((g) => g.kind === 'trace-rule').length).toBeGreaterThan(0);
    expect(rawAll()).not.toContain(`pid=${cliPid}`);
    await new Promise((r) => setTimeout(r, 200));
    expect(orphanTraceMonitors(process.pid, () => false).filter((m) => m.enginePid === cliPid)).toEqual([]);
    // the raw tables the killed trace created (in the pod netns, v4 and v6) are deleted by the sweep too: as before
    expect(gc.filter((g) => g.kind === 'trace-rule' && g.id?.startsWith('table ') && g.path === netnsA).length).toBeGreaterThan(0);
    expect(traceTablesOf(netnsA)).toEqual(before);
  });

  it('TRACE rules left by a killed engine (its pid gone) are removed at the next start, and reported', async () => {
    const dead = spawnSync('true').pid!;
    const rule = (ports: string) => [
      '-p',
      'tcp',
      '-m',
      'multiport',
      '--ports',
      ports,
      '-m',
      'comment',
      '--comment',
      `podscope-trace pid=${dead}`,
      '-j',
      'TRACE',
    ];
    // a live engine's rule (this process) must stay
    const live = [
      '-p',
      'tcp',
      '-m',
      'multiport',
      '--ports',
      '21999',
      '-m',
      'comment',
      '--comment',
      `podscope-trace pid=${process.pid}`,
      '-j',
      'TRACE',
    ];
    // iptables creates the host's raw table (and just the chain named) for the planted rules when it is absent, with
    // no Podscope comment, so no sweep takes it: the test deletes what it created at the end
    const rawTablesBefore = Object.keys(hostRawTables());
    sh('iptables', ['-t', 'raw', '-I', 'OUTPUT', ...rule('21111')]);
    sh('ip6tables', ['-t', 'raw', '-I', 'PREROUTING', ...rule('21112')]);
    sh('nsenter', [`--net=${netnsA}`, 'iptables', '-t', 'raw', '-I', 'PREROUTING', ...rule('21113')]);
    sh('iptables', ['-t', 'raw', '-I', 'OUTPUT', ...live]);
    // a kfree_skb tracefs instance of the dead engine
    const instance = `/sys/kernel/tracing/instances/podscope-trace-${dead}-1`;
    if (!existsSync('/sys/kernel/tracing/instances')) sh('mount', ['-t', 'tracefs', 'nodev', '/sys/kernel/tracing']);
    mkdirSync(instance);
    // and its `nft monitor trace`, left running (output to /dev/null: no pipe for it to find closed)
    const monitor = spawn('nft', ['monitor', 'trace'], { env: { ...process.env, [TRACE_MONITOR_ENV]: String(dead) }, stdio: 'ignore' });
    try {
      await engine.close();
      engine = await env.engine({ probeOnReady: false });
      const all = ((await engine.info()).startupGc ?? []).filter((g) => g.kind === 'trace-rule');
      expect(all.find((g) => g.id === `tracefs instance ${instance}`)).toMatchObject({ path: 'host' });
      expect(existsSync(instance)).toBe(false);
      const gc = all.filter((g) => !g.id?.startsWith('tracefs '));
      expect(gc.map((g) => `${g.path} ${g.id}`).sort()).toEqual(
        [
          `host -A OUTPUT -p tcp -m multiport --ports 21111 -m comment --comment "podscope-trace pid=${dead}" -j TRACE`,
          `host -A PREROUTING -p tcp -m multiport --ports 21112 -m comment --comment "podscope-trace pid=${dead}" -j TRACE`,
          `${netnsA} -A PREROUTING -p tcp -m multiport --ports 21113 -m comment --comment "podscope-trace pid=${dead}" -j TRACE`,
        ].sort(),
      );
      const left = [
        sh('iptables', ['-t', 'raw', '-S']),
        sh('ip6tables', ['-t', 'raw', '-S']),
        sh('nsenter', [`--net=${netnsA}`, 'iptables', '-t', 'raw', '-S']),
      ].join('');
      expect(left).not.toContain(`pid=${dead}`);
      expect(left).toContain(`pid=${process.pid}`);
      const gcMonitors = ((await engine.info()).startupGc ?? []).filter((g) => g.kind === 'process');
      expect(gcMonitors.find((g) => g.id === String(monitor.pid))?.action).toContain('nft monitor trace');
      await until(() => monitor.exitCode !== null || monitor.signalCode !== null, { what: 'the planted monitor to end' });
      expect(monitor.signalCode).toBe('SIGKILL');
    } finally {
      if (monitor.exitCode === null && monitor.signalCode === null) monitor.kill('SIGKILL');
      sh('iptables', ['-t', 'raw', '-D', 'OUTPUT', ...live]);
      // the planted rules are gone by now (the sweep's and the live one's -D): a table left holding a rule is not deleted
      for (const f of Object.keys(hostRawTables()))
        if (!rawTablesBefore.includes(f) && !sh(f === 'ip' ? 'iptables' : 'ip6tables', ['-t', 'raw', '-S']).includes('\n-A '))
          spawnSync('nft', ['delete', 'table', f, 'raw']);
    }
    expect(Object.keys(hostRawTables()), "the host's raw tables, as before the planted rules").toEqual(rawTablesBefore);
  });
});
