import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { exportPodConfig, importPodConfig, loadCrictlPodConfig } from '../../shared/domain/crictl-format';

const load = (text: string) => loadCrictlPodConfig(text, 'pod.json', () => 'generated-uid');

describe('crictl pod-config files', () => {
  it('reads the JSON form with snake_case keys and numeric enums', () => {
    const { config, warnings } = load(
      JSON.stringify({
        metadata: { name: 'web', namespace: 'default', uid: 'c0ffee-1', attempt: 0 },
        hostname: 'web',
        dns_config: { servers: ['10.96.0.10'], searches: ['svc.cluster.local'], options: ['ndots:5'] },
        port_mappings: [{ protocol: 0, container_port: 80, host_port: 8080, host_ip: '' }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M' },
        linux: { cgroup_parent: '', security_context: { namespace_options: { network: 0, pid: 0, ipc: 0 } } },
      }),
    );
    expect(warnings).toEqual([]);
    expect(config.port_mappings[0]).toEqual({ protocol: 0, container_port: 80, host_port: 8080, host_ip: '' });
    expect(config.dns_config?.servers).toEqual(['10.96.0.10']);
  });

  it('reads YAML; accepts enum names and other-case keys as Go does, but says so', () => {
    const { config, warnings } = load(
      'metadata: {name: a, namespace: b, uid: u}\nPort_Mappings: [{protocol: UDP, container_port: 53, host_port: 5353}]\nlinux: {security_context: {namespace_options: {network: NODE}}}\n',
    );
    expect(config.port_mappings[0]?.protocol).toBe(1);
    expect(config.linux?.security_context?.namespace_options?.network).toBe(2);
    expect(warnings).toEqual([
      'port_mappings: written "Port_Mappings"; crictl matches keys case-insensitively, so it is read as "port_mappings"',
      'port_mappings[0].protocol: "UDP" is an enum name; crictl needs the number (1)',
      'linux.security_context.namespace_options.network: "NODE" is an enum name; crictl needs the number (2)',
    ]);
  });

  it('names unknown keys (with a hint for camelCase) and CRI fields Podscope does not model', () => {
    const { warnings } = load(
      '{"metadata":{"name":"a","namespace":"b","uid":"u"},"logDirectory":"/x","linux":{"namespaces":{"options":{}},"resources":{}}}',
    );
    expect(warnings).toEqual([
      'logDirectory: unknown key, ignored as crictl would ignore it (did you mean "log_directory"? crictl uses snake_case proto names)',
      'linux.namespaces: unknown key, ignored as crictl would ignore it',
      'linux.resources: a CRI field Podscope does not support; it was left out',
    ]);
  });

  it('fills an empty uid as crictl does, and says so', () => {
    const { config, warnings } = load('{"metadata":{"name":"a","namespace":"b"}}');
    expect(config.metadata.uid).toBe('generated-uid');
    expect(warnings).toEqual(['metadata.uid is empty: generated generated-uid (crictl does the same)']);
  });

  it.each([
    ['{"metadata":{"name":"a","namespace":"b"},"port_mappings":[{"container_port":"80"}]}', /port_mappings\[0\]\.container_port/],
    ['{"metadata":{"name":"a","namespace":"b"},"port_mappings":[{"protocol":7}]}', /protocol must be one of 0 \(TCP\)/],
    ['{"metadata":{"namespace":"b"}}', /pod.json: metadata.name must be set/],
    ['{"hostname":"x"}', /metadata is required/],
    ['[1]', /must be an object/],
    ['{oops', /not valid JSON or YAML/],
  ])('rejects %s', (text, message) => {
    expect(() => load(text)).toThrow(message);
  });

  it('never throws for the form: errors and warnings come back together', () => {
    const r = importPodConfig('{"metadata":{"name":"a"},"bogus":1,"port_mappings":[{"host_port":"x"}]}');
    expect(r.config).toBeUndefined();
    expect(r.errors.join()).toMatch(/port_mappings\[0\]\.host_port/);
    expect(r.warnings).toEqual(['bogus: unknown key, ignored as crictl would ignore it']);
  });

  it('round-trips through JSON and YAML export', () => {
    const { config } = loadCrictlPodConfig('metadata: {name: a, namespace: b, uid: u}\nlabels: {app: x}\n', 'f', randomUUID);
    expect(load(exportPodConfig(config, 'json')).config).toEqual(config);
    expect(load(exportPodConfig(config, 'yaml')).config).toEqual(config);
  });
});
