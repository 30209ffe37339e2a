/**
 * scripts/critest-env.ts cleans up after a terminal's Ctrl-C, which is SIGINT to its whole process group (npx, tsx,
 * the script): the pod critest left is removed with its netns, veth, portmap rules and IP reservation, the bridge is
 * deleted and the `podscope cri` it started has ended. Run as the README runs it, in a process group of its own.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createCriEndpointApi } from '../../electron/cri/client';
import { leaseHost } from '../../testkit/allocator';
import { dnatChain, findLeftovers, formatLeftovers, processesMentioning, sweepLeftovers, type LeakScope } from '../../testkit/leak-check';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// bridge, subnet and host port from the test kit's allocator: this file runs beside the other real files
const lease = leaseHost('critest-env-signal');
const BRIDGE = lease.name('-cs');
const SUBNET = lease.subnet4(0);
const HOST_PORT = lease.port(0);

let dir: string | undefined;
let child: ChildProcess | undefined;
let scope: LeakScope | undefined;

const linkExists = (name: string) => {
  try {
    execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const natRules = () => execFileSync('iptables', ['-t', 'nat', '-S'], { encoding: 'utf8' });

afterAll(async () => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const p of dir ? processesMentioning([join(dir, 'podscope.sock')]) : []) process.kill(p.pid, 'SIGKILL');
  if (scope) sweepLeftovers(scope);
  if (linkExists(BRIDGE)) execFileSync('ip', ['link', 'del', BRIDGE]);
  if (dir) await rm(dir, { recursive: true, force: true });
  lease.release();
});

describe('scripts/critest-env.ts under a terminal Ctrl-C', () => {
  it('removes the pod it served, its bridge and its rules, and stops its daemon, on SIGINT to its process group', async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-critest-env-'));
    const envDir = join(dir, 'env');
    child = spawn('npx', ['tsx', 'scripts/critest-env.ts', '--dir', envDir, '--bridge', BRIDGE, '--subnet', SUBNET], {
      cwd: ROOT,
      detached: true, // its own process group, as a terminal's foreground job has
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ctrl-C stops it.')) resolve();
      });
      void exited.then((code) => reject(new Error(`critest-env exited ${code} before it was ready: ${err}`)));
    });

    // what a critest spec killed midway leaves: a pod with a host port, on the script's bridge
    const socket = join(envDir, 'podscope.sock');
    const api = createCriEndpointApi(socket, { connectTimeoutMs: 5000, callTimeoutMs: 60_000 });
    const { id } = await api.run({
      config: {
        metadata: { name: 'left-behind', namespace: 'default', uid: `u-${BRIDGE}` },
        port_mappings: [{ container_port: 80, host_port: HOST_PORT }],
      },
    });
    const status = await api.status(id);
    api.close();
    scope = {
      bridge: BRIDGE,
      subnets: [SUBNET],
      networks: [BRIDGE],
      ids: [id],
      ipamDir: join(envDir, 'ipam'),
      cacheDir: join(envDir, 'cni-cache'),
      stateDir: join(envDir, 'state'),
      runDir: join(envDir, 'run'),
    };
    // the run really made what the clean-up must remove
    expect(status.ip.startsWith(SUBNET.replace(/0\/24$/, ''))).toBe(true);
    expect(linkExists(BRIDGE)).toBe(true);
    expect(natRules()).toContain(dnatChain(BRIDGE, id));
    expect(findLeftovers(scope).length).toBeGreaterThan(0);

    process.kill(-child.pid!, 'SIGINT');
    // npx itself ends on the signal at once; the script's worker (a group of its own) when its clean-up is done
    await exited;
    const deadline = Date.now() + 120_000; // a bound on a hang, not a timing claim: the clean-up takes seconds
    while (processesMentioning([envDir]).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(processesMentioning([envDir])).toEqual([]);
    expect(err).toContain('SIGINT: cleaning up');

    expect(processesMentioning([socket])).toEqual([]);
    expect(linkExists(BRIDGE)).toBe(false);
    expect(natRules()).not.toContain(dnatChain(BRIDGE, id));
    expect(natRules()).not.toContain(String(HOST_PORT));
    expect(formatLeftovers(findLeftovers(scope))).toBe(formatLeftovers([]));
  }, 300_000);
});
