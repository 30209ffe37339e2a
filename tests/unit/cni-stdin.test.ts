import { describe, expect, it } from 'vitest';
import { pluginConfFromObject } from '../../electron/engine/cni/conf-list';
import { cniEnv, formatCniArgs, pluginEnv } from '../../electron/engine/cni/plugin-env';
import { buildPluginStdin, runtimeConfigFor } from '../../electron/engine/cni/plugin-stdin';

const CAPS = {
  portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }],
  bandwidth: { ingressRate: 1000, ingressBurst: 4294967295, egressRate: 0, egressBurst: 0 },
  'io.kubernetes.cri.pod-annotations': null,
};

describe('capability filtering (libcni injectRuntimeConfig)', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown> | undefined]>([
    ['no capabilities declared', {}, undefined],
    ['declared and supplied', { portMappings: true }, { portMappings: CAPS.portMappings }],
    ['declared false is not given', { portMappings: false, bandwidth: true }, { bandwidth: CAPS.bandwidth }],
    ['declared but not supplied', { mac: true, ips: true }, undefined],
    [
      'a supplied null value still counts as supplied',
      { 'io.kubernetes.cri.pod-annotations': true },
      { 'io.kubernetes.cri.pod-annotations': null },
    ],
  ])('%s', (_n, capabilities, want) => {
    expect(runtimeConfigFor(pluginConfFromObject({ type: 'x', capabilities }), CAPS)).toEqual(want);
  });
});

describe('per-plugin stdin (libcni buildOneConfig)', () => {
  const plugin = pluginConfFromObject({
    type: 'portmap',
    name: 'own',
    cniVersion: '0.1.0',
    capabilities: { portMappings: true },
    snat: true,
    'cni.dev/x': 1,
  });

  it('overwrites name/cniVersion, keeps every other key, adds prevResult and runtimeConfig', () => {
    const prev = { cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/8' }], dns: {} };
    const stdin = JSON.parse(buildPluginStdin({ networkName: 'net', cniVersion: '1.0.0', plugin, prevResult: prev, capabilityArgs: CAPS }));
    expect(stdin).toEqual({
      type: 'portmap',
      name: 'net',
      cniVersion: '1.0.0',
      capabilities: { portMappings: true },
      snat: true,
      'cni.dev/x': 1,
      prevResult: prev,
      runtimeConfig: { portMappings: CAPS.portMappings },
    });
  });

  it('omits prevResult and runtimeConfig when there is nothing to send', () => {
    const stdin = JSON.parse(buildPluginStdin({ networkName: 'net', cniVersion: '1.0.0', plugin, capabilityArgs: {} }));
    expect(stdin).not.toHaveProperty('prevResult');
    expect(stdin).not.toHaveProperty('runtimeConfig');
  });

  it('STATUS/GC style (no capability args) never gets runtimeConfig', () => {
    expect(JSON.parse(buildPluginStdin({ networkName: 'net', cniVersion: '1.1.0', plugin }))).not.toHaveProperty('runtimeConfig');
  });

  it('does not modify the loaded plugin object', () => {
    buildPluginStdin({ networkName: 'net', cniVersion: '1.0.0', plugin, capabilityArgs: CAPS });
    expect(plugin.raw.name).toBe('own');
  });
});

describe('plugin environment (libcni invoke.Args)', () => {
  it('formats CNI_ARGS as k=v;k=v in the given order', () => {
    expect(
      formatCniArgs([
        ['K8S_POD_NAMESPACE', 'ns'],
        ['K8S_POD_NAME', 'p'],
        ['IgnoreUnknown', '1'],
      ]),
    ).toBe('K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;IgnoreUnknown=1');
    expect(formatCniArgs([])).toBe('');
  });

  it('always sets all six CNI_* variables and they win over the engine env', () => {
    const cni = cniEnv({ verb: 'DEL', containerId: 'abc', netns: '', ifName: 'eth0', args: [], binDirs: ['/opt/cni/bin', '/usr/lib/cni'] });
    expect(cni).toEqual({
      CNI_COMMAND: 'DEL',
      CNI_CONTAINERID: 'abc',
      CNI_NETNS: '',
      CNI_IFNAME: 'eth0',
      CNI_ARGS: '',
      CNI_PATH: '/opt/cni/bin:/usr/lib/cni',
    });
    expect(pluginEnv({ PATH: '/bin', CNI_NETNS: '/stale', CNI_PATH: '/old' }, cni)).toEqual({ PATH: '/bin', ...cni });
  });
});
