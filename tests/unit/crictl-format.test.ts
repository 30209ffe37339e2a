import { describe, expect, it } from 'vitest';
import { formatPodConfig, parsePodConfigText } from '../../shared/domain/crictl-format';

describe('crictl pod-config files', () => {
  it('reads the JSON form with snake_case keys and numeric enums', () => {
    const { config, warnings } = parsePodConfigText(JSON.stringify({
      metadata: { name: 'web', namespace: 'default', uid: 'c0ffee-1', attempt: 0 },
      hostname: 'web',
      dns_config: { servers: ['10.96.0.10'], searches: ['svc.cluster.local'], options: ['ndots:5'] },
      port_mappings: [{ protocol: 0, container_port: 80, host_port: 8080, host_ip: '' }],
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M' },
      linux: { cgroup_parent: '', security_context: { namespace_options: { network: 0, pid: 0, ipc: 0 } } },
    }));
    expect(warnings).toEqual([]);
    expect(config.port_mappings[0]).toEqual({ protocol: 0, container_port: 80, host_port: 8080, host_ip: '' });
    expect(config.dns_config?.servers).toEqual(['10.96.0.10']);
  });

  it('reads YAML, accepts enum names and matches keys case-insensitively as Go does', () => {
    const { config, warnings } = parsePodConfigText('metadata: {name: a, namespace: b, uid: u}\nPort_Mappings: [{protocol: UDP, container_port: 53, host_port: 5353}]\nlinux: {security_context: {namespace_options: {network: NODE}}}\n');
    expect(warnings).toEqual([]);
    expect(config.port_mappings[0]?.protocol).toBe(1);
    expect(config.linux?.security_context?.namespace_options?.network).toBe(2);
  });

  it('warns about unknown keys, with a hint for camelCase', () => {
    const { warnings } = parsePodConfigText('{"metadata":{"name":"a","namespace":"b","uid":"u"},"logDirectory":"/x","linux":{"namespaces":{"options":{}}}}');
    expect(warnings).toEqual([
      'unknown key logDirectory ignored (did you mean log_directory? crictl files use snake_case)',
      'unknown key linux.namespaces ignored',
    ]);
  });

  it.each([
    ['{"metadata":{"name":"a","namespace":"b"},"port_mappings":[{"container_port":"80"}]}', /port_mappings\[0\]\.container_port/],
    ['{"metadata":{"name":"a","namespace":"b"},"port_mappings":[{"protocol":7}]}', /protocol must be one of 0 \(TCP\)/],
    ['{"metadata":{"namespace":"b"}}', /metadata.name must be set/],
    ['{"hostname":"x"}', /metadata is required/],
    ['[1]', /expected an object/],
    ['{oops', /not valid JSON or YAML/],
  ])('rejects %s', (text, message) => {
    expect(() => parsePodConfigText(text)).toThrow(message);
  });

  it('round-trips through JSON and YAML export', () => {
    const { config } = parsePodConfigText('metadata: {name: a, namespace: b, uid: u}\nlabels: {app: x}\n');
    expect(parsePodConfigText(formatPodConfig(config, 'json')).config).toEqual(config);
    expect(parsePodConfigText(formatPodConfig(config, 'yaml')).config).toEqual(config);
  });
});
