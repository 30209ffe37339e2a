/** `podscope` as crictl users drive it: a crictl pod-config file through runp, pods, inspectp, stopp, rmp. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { createRealEnv, type RealEnv } from '../../testkit/throwaway-env';
import { escapeRe } from '../../testkit/until';
import { engineFlagsFor } from '../../testkit/engine-flags';
import { podscope as podscopeRaw } from './helpers/podscope-cli';

let env: RealEnv;
let flags: string[];

function podscope(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return podscopeRaw(...args, ...flags);
}

beforeAll(async () => {
  env = await createRealEnv({ tag: 'cli' });
  const o = env.options;
  flags = engineFlagsFor({ ...o, cniBinDirs: ['/usr/lib/cni'] });
});

afterAll(async () => {
  await env?.teardown();
});

describe('podscope CLI', () => {
  it('runs a crictl YAML pod config, lists, inspects, stops and removes it', async () => {
    const file = join(env.dir, 'pod.yaml');
    await writeFile(
      file,
      `metadata:
  name: cli-web
  namespace: default
  attempt: 1
hostname: cli-web
port_mappings:
  - {protocol: 0, container_port: 80, host_port: ${env.port(0)}}
  - {container_port: 81}
annotations:
  kubernetes.io/ingress-bandwidth: 10M
portMappings: []
`,
    );
    const runp = await podscope('runp', file);
    expect(runp.code).toBe(0);
    const id = runp.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    // crictl fills a missing uid; unknown keys are reported, not dropped silently
    expect(runp.stderr).toContain('metadata.uid is empty: generated');
    expect(runp.stderr).toContain('portMappings: unknown key, ignored as crictl would ignore it (did you mean "port_mappings"?');

    const pods = await podscope('pods', '--state', 'ready', '--name', 'cli-');
    expect(pods.stdout).toMatch(/^POD ID\s+CREATED\s+STATE\s+NAME\s+NAMESPACE\s+ATTEMPT\s+IP\s+HOST PORTS/);
    expect(pods.stdout).toContain(id.slice(0, 13));
    expect(pods.stdout).toMatch(
      new RegExp(
        `READY\\s+cli-web\\s+default\\s+1\\s+${escapeRe(subnetTextPrefix(env.subnet4))}\\d+,${escapeRe(subnetTextPrefix(env.subnet6!))}:\\S+\\s+${env.port(0)}->80/tcp`,
      ),
    );

    const json = JSON.parse((await podscope('pods', '-o', 'json')).stdout);
    expect(json.items).toHaveLength(1);

    const text = (await podscope('inspectp', id.slice(0, 8))).stdout;
    expect(text).toContain('preference ipv4: the first IPv4 address on eth0');
    expect(text).toContain('DROPPED: host_port 0');
    expect(text).toContain('10M = 10000000 bit/s (10 Mbit/s)');
    const live = (await podscope('inspectp', '--live', id)).stdout;
    expect(live).toMatch(/ok  ingress  tbf at 10 Mbit\/s on veth\w+, as annotated/);
    expect(live).toMatch(new RegExp(`ok  port 0  DNAT \\*:${env.port(0)}/tcp → ${escapeRe(subnetTextPrefix(env.subnet4))}\\d+:80`));
    const status = JSON.parse((await podscope('inspectp', '-o', 'json', id)).stdout);
    expect(status.trace.filter((t: { plugin?: { verb: string } }) => t.plugin?.verb === 'ADD')).toHaveLength(4);

    const refused = await podscope('rmp', id);
    expect(refused.code).toBe(5); // FailedPrecondition: READY needs --force, as crictl says
    expect(refused.stderr).toContain('please use --force');
    expect((await podscope('stopp', id)).code).toBe(0);
    expect((await podscope('stopp', id)).code).toBe(0);
    expect((await podscope('rmp', id)).code).toBe(0);
    expect((await podscope('pods', '-q')).stdout).toBe('');
  });

  it.each([
    [['inspectp', 'ffffffffffff'], 3, /NotFound: an error occurred when try to find sandbox "ffffffffffff": not found/],
    [['runp', '/nonexistent.json'], 2, /InvalidArgument: cannot read \/nonexistent.json: ENOENT/],
    [['pods', '--state', 'sleepy'], 2, /--state must be ready or notready/],
    [['pods', '--bogus'], 2, /Unknown option '--bogus'/],
    [['frobnicate'], 2, /unknown command "frobnicate"/],
  ])('%o exits %i with a clear message', async (args, code, message) => {
    const r = await podscope(...args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
  });

  it('drives a CRI endpoint with --endpoint before the command (here a `podscope cri` server on the same engine dirs)', async () => {
    const { createEngine } = await import('../../electron/engine/index');
    const { startCriServer } = await import('../../electron/cri/server');
    const engine = await createEngine(env.options);
    const server = await startCriServer({ engine, socketPath: join(env.dir, 'cri.sock') });
    const endpoint = `unix://${server.socketPath}`;
    try {
      const file = join(env.dir, 'cri-pod.json');
      await writeFile(
        file,
        JSON.stringify({
          metadata: { name: 'via-cri', namespace: 'default', uid: 'u-cri' },
          port_mappings: [{ container_port: 80, host_port: env.port(1) }],
        }),
      );
      const runp = await podscopeRaw('--endpoint', endpoint, 'runp', file);
      expect(runp.stderr).toBe('');
      const id = runp.stdout.trim();
      expect(id).toMatch(/^[0-9a-f]{64}$/);
      expect((await podscopeRaw('--endpoint', endpoint, 'pods')).stdout).toMatch(/READY\s+via-cri\s+default/);
      expect(
        JSON.parse((await podscopeRaw('--endpoint', endpoint, 'inspectp', '-o', 'json', id.slice(0, 10))).stdout).ip.startsWith(
          subnetTextPrefix(env.subnet4),
        ),
      ).toBe(true);
      expect((await podscopeRaw('--endpoint', endpoint, 'stopp', id)).code).toBe(0);
      expect((await podscopeRaw('--endpoint', endpoint, 'rmp', id)).code).toBe(0);
      expect((await podscopeRaw('--endpoint', endpoint, 'pods', '-q')).stdout).toBe('');
      expect((await podscopeRaw('--endpoint', `unix://${join(env.dir, 'nothing.sock')}`, 'pods')).code).toBe(8); // Unavailable
    } finally {
      await server.close();
      await engine.close();
    }
  });

  it('refuses a config with an invalid bandwidth and creates nothing', async () => {
    const file = join(env.dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({
        metadata: { name: 'bad', namespace: 'default', uid: 'u' },
        annotations: { 'kubernetes.io/egress-bandwidth': '10X' },
      }),
    );
    const r = await podscope('runp', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('kubernetes.io/egress-bandwidth "10X": quantities must match the regular expression');
    expect((await podscope('pods', '-q')).stdout).toBe('');
  });
});
