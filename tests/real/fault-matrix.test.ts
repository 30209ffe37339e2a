/**
 * Fault-injection matrix: bridge + portmap + bandwidth with host-local v4+v6 and ipMasq, the real Debian
 * plugins doing the real work, each wrapped by a small shell script (the fake at the OS boundary) that fails before
 * or after the real ADD, and fails or hangs before the real DEL, as a per-pod control file says.
 * For each case: run (fails), then stop and remove (the injected DEL failure switched off first: a transient failure),
 * then the shared leak checker must find nothing for the case's sandbox; while something was pending, the sandbox
 * must have been listed NOTREADY with the pending plugin named. A default subset keeps CI short;
 * PODSCOPE_FULL_MATRIX=1 runs every combination. Needs root.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import {
  dnatChain,
  findLeftovers,
  formatLeftovers,
  ifbDevice,
  ipMasqChain,
  sweepLeftovers,
  subnetTextPrefix,
  type LeakScope,
} from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { escapeRe } from '../../testkit/until';

const TYPES = ['bridge', 'portmap', 'bandwidth'] as const;
type AddFault = 'fail-before' | 'fail-after';
type DelFault = 'ok' | 'fail' | 'hang';
interface Case {
  pos: 0 | 1 | 2;
  add: AddFault;
  delOf: 'same' | 'other';
  del: DelFault;
}

/** the DEL that misbehaves: the failing plugin itself, or another one (bridge, or portmap when bridge is the one) */
const delTarget = (c: Case) => (c.delOf === 'same' ? c.pos : c.pos === 0 ? 1 : 0);
const caseName = (c: Case) =>
  `${TYPES[c.pos]} ADD ${c.add}, DEL of ${c.del === 'ok' ? 'every plugin ok' : `${TYPES[delTarget(c)]} (${c.delOf}) ${c.del}s`}`;

function allCases(): Case[] {
  const out: Case[] = [];
  for (const pos of [0, 1, 2] as const) {
    for (const add of ['fail-before', 'fail-after'] as const) {
      out.push({ pos, add, delOf: 'same', del: 'ok' });
      for (const delOf of ['same', 'other'] as const) for (const del of ['fail', 'hang'] as const) out.push({ pos, add, delOf, del });
    }
  }
  return out;
}

/** Every DEL failure combination, and hangs / clean DELs at representative positions (each hang costs a timeout). */
function defaultCases(): Case[] {
  const pick = (pos: 0 | 1 | 2, add: AddFault, delOf: 'same' | 'other', del: DelFault): Case => ({ pos, add, delOf, del });
  return [
    ...allCases().filter((c) => c.del === 'fail'),
    pick(0, 'fail-after', 'same', 'hang'),
    pick(1, 'fail-before', 'same', 'hang'),
    pick(2, 'fail-after', 'other', 'hang'),
    pick(1, 'fail-after', 'other', 'hang'),
    pick(1, 'fail-after', 'same', 'ok'),
    pick(2, 'fail-before', 'same', 'ok'),
  ];
}

const CASES = process.env.PODSCOPE_FULL_MATRIX === '1' ? allCases() : defaultCases();
/** short, so a hanging DEL costs little; still far above what a real ADD/DEL takes here */
const PLUGIN_TIMEOUT_MS = 5000;

let env: RealEnv;
let engine: SandboxEngine;
let wrapDir: string;
let ctlDir: string;
let netnsDir: string;

function wrapper(type: string): string {
  // The pod comes from CNI_ARGS (K8S_POD_NAME), so cases can run side by side with their own faults.
  return `#!/bin/sh
# fault-injection wrapper around the real ${type} plugin (tests/real/fault-matrix.test.ts)
real=/usr/lib/cni/${type}
# read with the shell's own words, no tr/sed/cat: every plugin call of the matrix goes through here
pod=
set -f; saved_ifs=$IFS; IFS=';'
for kv in $CNI_ARGS; do case "$kv" in K8S_POD_NAME=*) pod=\${kv#K8S_POD_NAME=};; esac; done
IFS=$saved_ifs; set +f
ctl="${ctlDir}/$pod/${type}.$CNI_COMMAND"
mode=
[ -n "$pod" ] && [ -f "$ctl" ] && { read -r mode < "$ctl" || true; }
fail() { printf '{"cniVersion":"1.0.0","code":999,"msg":"injected ${type} %s failure %s the real plugin"}' "$CNI_COMMAND" "$1"; exit 1; }
case "$mode" in
  fail-before|fail) cat >/dev/null; fail before;;
  hang) exec sleep 120;;
esac
out=$("$real"); rc=$?
[ "$mode" = fail-after ] && fail after
printf '%s' "$out"
exit $rc
`;
}

interface Outcome {
  name: string;
  listedPending: boolean;
  expectedPending: boolean;
  leftovers: number;
  ms: number;
}
const outcomes: Outcome[] = [];

beforeAll(async () => {
  env = await createRealEnv({ tag: 'r1-fm', ipMasq: true });
  wrapDir = join(env.dir, 'wrap-bin');
  ctlDir = join(env.dir, 'faults');
  netnsDir = mkdtempSync(join(tmpdir(), 'podscope-r1-netns-'));
  mkdirSync(wrapDir);
  mkdirSync(ctlDir);
  for (const t of TYPES) {
    writeFileSync(join(wrapDir, t), wrapper(t));
    chmodSync(join(wrapDir, t), 0o755);
  }
  engine = await env.engine({ cniBinDirs: [wrapDir, '/usr/lib/cni'], pluginTimeoutMs: PLUGIN_TIMEOUT_MS, netnsDir });
}, 60_000);

function scope(extra: Partial<LeakScope> = {}): LeakScope {
  const o = env.options;
  return { networks: [env.network], ipamDir: env.ipamDir, cacheDir: o.cniCacheDir, stateDir: o.stateDir, runDir: o.runDir, ...extra };
}

afterAll(async () => {
  if (outcomes.length > 0) {
    console.log(
      `fault matrix: ${outcomes.length} cases, ${outcomes.filter((o) => o.leftovers > 0).length} with leftovers, ${outcomes.reduce((n, o) => n + o.leftovers, 0)} leftovers in all\n${outcomes.map((o) => `  ${o.leftovers === 0 ? 'ok  ' : 'LEAK'} ${o.name}: pending ${o.listedPending ? 'listed' : 'none'}${o.expectedPending ? ' (expected)' : ''}, leftovers ${o.leftovers}, ${Math.round(o.ms)} ms`).join('\n')}`,
    );
  }
  if (!env) return;
  await env.teardown();
  // whatever a failing case left: removed by scope, so the host ends as it started
  sweepLeftovers({ ...scope(), bridge: env.bridge, subnets: [env.subnet4, env.subnet6!], netnsDir });
  try {
    execFileSync('umount', ['-l', netnsDir], { stdio: 'ignore' });
  } catch {
    /* not a mount point */
  }
  rmSync(netnsDir, { recursive: true, force: true });
}, 120_000);

describe('the leak checker', () => {
  // It must be able to fail: a running sandbox holds one of every kind it looks for.
  it('sees every kind of resource a running sandbox holds (netns, veth, tbf/ifb, reservations, ipMasq and DNAT rules v4+v6, cache, runc, record)', async () => {
    const { id } = await engine.run({
      config: {
        metadata: { name: 'fm-live', namespace: 'r1-matrix', uid: 'uid-live' },
        port_mappings: [{ container_port: 80, host_port: env.port(48) }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '5M' },
      },
    });
    const st = await engine.status(id);
    try {
      const left = findLeftovers(scope({ ids: [id], netnsPaths: [st.netnsPath!], ownsDirs: false }));
      const kinds = new Set(left.map((l) => l.kind));
      expect([...kinds].sort()).toEqual(
        ['cache', 'dir', 'interface', 'ip6tables', 'iptables', 'ipam', 'mount', 'netns', 'qdisc', 'record', 'runc'].sort(),
      );
      const rules = left
        .filter((l) => l.kind === 'iptables' || l.kind === 'ip6tables')
        .map((l) => l.what)
        .join('\n');
      expect(rules).toContain(`-N ${ipMasqChain(env.network, id)}`);
      expect(rules).toContain(`-N ${dnatChain(env.network, id)}`);
      expect(rules).toMatch(new RegExp(`CNI-HOSTPORT-DNAT .*--dports ${env.port(48)}`));
      expect(left.filter((l) => l.kind === 'ipam')).toHaveLength(2); // v4 and v6
      expect(left.some((l) => l.kind === 'interface' && l.what === ifbDevice(env.network, id))).toBe(true);
    } finally {
      await engine.remove(id);
    }
    expect(formatLeftovers(findLeftovers(scope({ ids: [id], netnsPaths: [st.netnsPath!], ownsDirs: false })))).toBe('');
  }, 60_000);
});

describe('fault matrix: plugin position × fail before/after ADD × DEL (same/other plugin) ok/fails/hangs', () => {
  CASES.forEach((c, i) => {
    it.concurrent(`#${i} ${caseName(c)}: no leftovers after run, stop, remove; pending listed while left`, async ({ expect }) => {
      const t0 = performance.now();
      const name = `fm-${i}`;
      const faults = join(ctlDir, name);
      mkdirSync(faults);
      writeFileSync(join(faults, `${TYPES[c.pos]}.ADD`), c.add);
      if (c.del !== 'ok') writeFileSync(join(faults, `${TYPES[delTarget(c)]}.DEL`), c.del);

      const err = await engine
        .run({
          config: {
            metadata: { name, namespace: 'r1-matrix', uid: `uid-${name}` },
            port_mappings: [{ container_port: 80, host_port: env.port(i) }],
            annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '5M' },
          },
        })
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      expect(err?.message).toMatch(new RegExp(`injected ${TYPES[c.pos]} ADD failure`));
      const id = /sandbox "([0-9a-f]{64})"/.exec(err!.message)?.[1];
      expect(id).toBeDefined();

      // A DEL that did not succeed for a plugin that ran leaves work: the sandbox must be listed with it.
      const expectedPending = c.del !== 'ok' && delTarget(c) <= c.pos;
      const listed = (await engine.list({ id })).find((s) => s.id === id);
      const netnsPaths: string[] = [];
      if (listed) netnsPaths.push(...[(await engine.status(id!)).netnsPath ?? ''].filter(Boolean));
      const pending = listed?.cleanupPending?.find((p) => p.kind === 'cni' && p.plugin === TYPES[delTarget(c)]);
      outcomes.push({ name: `#${i} ${caseName(c)}`, listedPending: !!pending, expectedPending, leftovers: -1, ms: 0 });
      const outcome = outcomes[outcomes.length - 1]!;

      // the fault was transient: switch it off, then stop and remove as a user would
      rmSync(faults, { recursive: true, force: true });
      await engine.stop(id!);
      await engine.remove(id!);

      const left = findLeftovers(scope({ ids: [id!], netnsPaths, ownsDirs: false }));
      outcome.leftovers = left.length;
      outcome.ms = performance.now() - t0;
      if (left.length > 0) sweepLeftovers(scope({ ids: [id!], netnsPaths, ownsDirs: false }));
      expect(formatLeftovers(left)).toBe('');
      if (expectedPending) {
        expect(listed?.state).toBe('SANDBOX_NOTREADY');
        expect(pending).toBeDefined();
        expect(listed?.notReadyReason).toMatch(new RegExp(`^cleanup pending: .*CNI DEL of ${TYPES[delTarget(c)]} #${delTarget(c)}`));
        expect(err!.message).toMatch(/cleanup pending/);
      } else {
        expect(listed).toBeUndefined(); // a clean unwind forgets the sandbox
      }
      expect((await engine.list({ id })).find((s) => s.id === id)).toBeUndefined();
    }, 60_000);
  });
});

describe('after the matrix', () => {
  it('nothing of the whole run is left: no interface on the bridge, no netns, reservation, rule, cache file, container or record', () => {
    const left = findLeftovers({ ...scope(), bridge: env.bridge, subnets: [env.subnet4, env.subnet6!], netnsDir });
    expect(formatLeftovers(left)).toBe('');
  });

  it('a DEL that keeps failing: remove refuses, the sandbox stays listed with it, and remove --force gives up only after naming what it leaves', async () => {
    const name = 'fm-permanent';
    const faults = join(ctlDir, name);
    mkdirSync(faults, { recursive: true });
    writeFileSync(join(faults, 'portmap.ADD'), 'fail-after');
    writeFileSync(join(faults, 'bridge.DEL'), 'fail');
    const err = (await engine
      .run({
        config: {
          metadata: { name, namespace: 'r1-matrix', uid: 'uid-perm' },
          port_mappings: [{ container_port: 80, host_port: env.port(49) }],
        },
      })
      .catch((e: unknown) => e)) as Error;
    const id = /sandbox "([0-9a-f]{64})"/.exec(err.message)![1]!;
    const netnsPath = (await engine.status(id)).netnsPath!;
    try {
      await expect(engine.remove(id)).rejects.toThrow(/injected bridge DEL failure/);
      const [s] = await engine.list({ id });
      expect(s?.cleanupPending?.map((p) => `${p.kind}:${p.plugin}`)).toEqual(expect.arrayContaining(['cni:bridge']));
      // what the bridge still holds is named: the reservation from its ADD result
      expect(s?.cleanupPending?.find((p) => p.plugin === 'bridge')?.holds.join(' ')).toMatch(
        new RegExp(
          String.raw`IPAM reservation ${escapeRe(subnetTextPrefix(env.subnet4))}\d+/24, ${escapeRe(subnetTextPrefix(env.subnet6!))}:[0-9a-f]+/64`,
        ),
      );
      const forced = (await engine.remove(id, { force: true }).catch((e: unknown) => e)) as Error;
      expect(forced.message).toMatch(
        new RegExp(
          String.raw`removed by force, but its cleanup did not finish; left behind on the host .*CNI DEL of bridge #0 on ${escapeRe(env.bridge)}/eth0 \(holds IPAM reservation ${escapeRe(subnetTextPrefix(env.subnet4))}`,
        ),
      );
      expect(await engine.list({ id })).toEqual([]);
      // and it told the truth: the reservation and the netns really are still there
      const left = findLeftovers(scope({ ids: [id], netnsPaths: [netnsPath], ownsDirs: false }));
      expect(left.map((l) => l.kind)).toEqual(expect.arrayContaining(['ipam', 'netns']));
    } finally {
      rmSync(faults, { recursive: true, force: true });
      sweepLeftovers(scope({ ids: [id], netnsPaths: [netnsPath], ownsDirs: false }));
    }
    expect(formatLeftovers(findLeftovers(scope({ ids: [id], netnsPaths: [netnsPath], ownsDirs: false })))).toBe('');
  }, 60_000);
});
