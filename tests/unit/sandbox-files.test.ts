import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PodSandboxConfigSchema, type PodSandboxConfigInput } from '../../shared/domain/config';
import { ScriptedRunner } from '../../testkit/fakes/scripted-runner';
import {
  mountShm,
  renderHostname,
  renderResolvConf,
  sandboxPaths,
  unmountShm,
  writeSandboxFiles,
  type HostFiles,
} from '../../electron/engine/runtime/sandbox-files';

const config = (c: Omit<PodSandboxConfigInput, 'metadata'> = {}) => PodSandboxConfigSchema.parse({ metadata: { name: 'p' }, ...c });

describe('renderResolvConf (docs/semantics.md#sandbox-files)', () => {
  it.each([
    {
      name: 'search, nameservers, options in that order',
      dns: { servers: ['10.10.10.10', '8.8.8.8'], searches: ['google.com', 'svc.local'], options: ['ndots:8', 'edns0'] },
      expected: 'search google.com svc.local\nnameserver 10.10.10.10\nnameserver 8.8.8.8\noptions ndots:8 edns0\n',
    },
    { name: 'servers only', dns: { servers: ['1.1.1.1'], searches: [], options: [] }, expected: 'nameserver 1.1.1.1\n' },
    {
      name: 'searches and options without servers',
      dns: { servers: [], searches: ['a'], options: ['ndots:2'] },
      expected: 'search a\noptions ndots:2\n',
    },
    { name: 'an empty DNSConfig gives an empty file', dns: { servers: [], searches: [], options: [] }, expected: '' },
  ])('$name', ({ dns, expected }) => {
    expect(renderResolvConf(dns)).toBe(expected);
  });
});

describe('renderHostname', () => {
  it('uses the pod hostname, else the host one, with a trailing newline', () => {
    expect(renderHostname(config({ hostname: 'web-0' }), 'node1')).toBe('web-0\n');
    expect(renderHostname(config(), 'node1')).toBe('node1\n');
  });
});

describe('sandboxPaths', () => {
  it('lays files out under <stateDir>/sandboxes/<id> and shm + bundle under <runDir>/sandboxes/<id>', () => {
    expect(sandboxPaths('/var/lib/podscope', '/run/podscope', 'abc')).toEqual({
      filesDir: '/var/lib/podscope/sandboxes/abc',
      runtimeDir: '/run/podscope/sandboxes/abc',
      hostname: '/var/lib/podscope/sandboxes/abc/hostname',
      hosts: '/var/lib/podscope/sandboxes/abc/hosts',
      resolvConf: '/var/lib/podscope/sandboxes/abc/resolv.conf',
      shm: '/run/podscope/sandboxes/abc/shm',
      bundle: '/run/podscope/sandboxes/abc/bundle',
    });
  });
});

describe('writeSandboxFiles', () => {
  let dir: string;
  let host: HostFiles;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-files-'));
    host = { hostsPath: join(dir, 'host-hosts'), resolvConfPath: join(dir, 'host-resolv'), hostname: 'node1' };
    await writeFile(host.hostsPath, '127.0.0.1 localhost\n');
    await writeFile(host.resolvConfPath, 'nameserver 192.0.2.53\n');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('copies the host resolv.conf when dns_config is nil, and always the host /etc/hosts', async () => {
    const paths = sandboxPaths(join(dir, 'state'), join(dir, 'run'), 'id1');
    await writeSandboxFiles(paths, config(), host);
    expect(await readFile(paths.resolvConf, 'utf8')).toBe('nameserver 192.0.2.53\n');
    expect(await readFile(paths.hosts, 'utf8')).toBe('127.0.0.1 localhost\n');
    expect(await readFile(paths.hostname, 'utf8')).toBe('node1\n');
  });

  it('renders dns_config (even an empty one) with mode 0644', async () => {
    const paths = sandboxPaths(join(dir, 'state'), join(dir, 'run'), 'id2');
    await writeSandboxFiles(paths, config({ hostname: 'h', dns_config: {} }), host);
    expect(await readFile(paths.resolvConf, 'utf8')).toBe('');
    expect((await stat(paths.resolvConf)).mode & 0o777).toBe(0o644);
    expect(await readFile(paths.hostname, 'utf8')).toBe('h\n');
  });

  it('fails as RuntimeError naming the directory when a host file is missing', async () => {
    const paths = sandboxPaths(join(dir, 'state'), join(dir, 'run'), 'id3');
    await expect(writeSandboxFiles(paths, config(), { ...host, hostsPath: join(dir, 'missing') })).rejects.toMatchObject({
      code: 'RuntimeError',
      message: expect.stringContaining(paths.filesDir),
    });
  });
});

describe('shm mount commands', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podscope-shm-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('mounts a 64 MiB noexec,nosuid,nodev tmpfs with mode 1777 on an unmounted dir', async () => {
    const runner = new ScriptedRunner();
    await mountShm(runner, join(dir, 'shm'));
    expect(runner.calls.map((r) => [r.file, ...(r.args ?? [])])).toEqual([
      ['mount', '-t', 'tmpfs', '-o', 'noexec,nosuid,nodev,mode=1777,size=67108864', 'shm', join(dir, 'shm')],
    ]);
  });

  it('unmount is a no-op for a directory that is not mounted or does not exist', async () => {
    const runner = new ScriptedRunner();
    await unmountShm(runner, dir);
    await unmountShm(runner, join(dir, 'gone'));
    expect(runner.calls).toEqual([]);
  });
});
