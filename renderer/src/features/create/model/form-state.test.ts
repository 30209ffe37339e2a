import { describe, expect, it } from 'vitest';
import { PodSandboxConfigSchema } from '../../../../../shared/domain/config';
import {
  bandwidthQuantity,
  clashingSandboxId,
  defaultLogDirectory,
  emptyForm,
  fromConfig,
  hostnameError,
  newKvRow,
  newPortRow,
  splitQuantity,
  splitTypedUnit,
  toConfig,
  validateForm,
} from './form-state';
import { exportCrictl, importCrictl } from './crictl-io';
import { asNewPodConfig } from '../../../../../shared/domain/crictl-format';

const base = () => ({ ...emptyForm(), name: 'web', namespace: 'default' });

describe('create form model', () => {
  it('builds a crictl-shaped config: numeric enums, bandwidth annotations, host network', () => {
    const f = {
      ...base(),
      network: 'host' as const,
      ports: [{ ...newPortRow(), protocol: 'UDP' as const, containerPort: '53', hostPort: '0' }],
      ingress: { value: '10', unit: 'M' as const },
      cgroupParent: '/pods',
    };
    const c = toConfig(f);
    expect(c.port_mappings).toEqual([{ protocol: 1, container_port: 53, host_port: 0, host_ip: '' }]);
    expect(c.annotations).toEqual({ 'kubernetes.io/ingress-bandwidth': '10M' });
    expect(c.linux).toEqual({ cgroup_parent: '/pods', security_context: { namespace_options: { network: 2 } } });
    expect(PodSandboxConfigSchema.safeParse(c).success).toBe(true);
  });

  it('validates with the shared rules: bandwidth grammar and limits, ports, duplicates', () => {
    const port = { ...newPortRow(), containerPort: '', hostPort: '70000' };
    const dup = newKvRow('app', 'x');
    const e = validateForm({
      ...base(),
      ports: [port],
      labels: [newKvRow('app', 'y'), dup],
      ingress: { value: '10X', unit: '' },
      egress: { value: '1', unit: '' },
    });
    expect(e[`ports.${port.key}.containerPort`]).toMatch(/required/);
    expect(e[`ports.${port.key}.hostPort`]).toMatch(/between 0 and 65535/);
    expect(e[`labels.${dup.key}`]).toMatch(/duplicate/);
    expect(e.ingress).toBe(
      '"10X" is not a bandwidth. Accepted: bits per second from 1k to 1P: a number with an optional suffix k, M, G, T (×1000) or Ki, Mi, Gi, Ti (×1024), e.g. 10M, 512k, 1.5G, 100Mi',
    );
    expect(e.egress).toMatch(/^"1": resource is unreasonably small \(< 1kbit\)\. Accepted: .*e\.g\. 10M/);
    // a number box holding letters never combines with the unit into nonsense ("10Q" + "M" is not "10QM")
    const combined = validateForm({ ...base(), ingress: { value: '10Q', unit: 'M' } });
    expect(combined.ingress).toMatch(/^"10Q" is not a number: with the unit set to M, type only the number/);
    expect(combined.ingress).not.toContain('10QM');
    expect(bandwidthQuantity({ value: '10Q', unit: 'M' })).toBeUndefined();
    expect(splitTypedUnit('10M')).toEqual({ value: '10', unit: 'M' });
    expect(splitTypedUnit('1.5Gi')).toEqual({ value: '1.5', unit: 'Gi' });
    expect(splitTypedUnit('10Q')).toBeUndefined();
    expect(validateForm({ ...base(), ingress: { value: '1.5', unit: 'Gi' } })).toEqual({});
  });

  it('says why a hostname is invalid: spaces, length, characters, empty or dashed parts', () => {
    expect(hostnameError('web 1')).toMatch(/^contains a space/);
    expect(hostnameError('a'.repeat(65))).toMatch(/^is 65 characters long: at most 64 fit/);
    expect(hostnameError('a'.repeat(64))).toBeUndefined();
    expect(hostnameError('web_1!')).toBe('contains "_", "!": only letters, digits, "-" and "." are allowed');
    expect(hostnameError('web..x')).toMatch(/^has an empty part/);
    expect(hostnameError('-web')).toMatch(/^part "-web" starts or ends with "-"/);
    expect(hostnameError('web-1.example')).toBeUndefined();
    expect(validateForm({ ...base(), hostname: 'my host' }).hostname).toMatch(/^hostname contains a space/);
  });

  it("finds the sandbox that holds a clashing name: from the engine's details or containerd's text", () => {
    const holder = 'ab'.repeat(32);
    expect(clashingSandboxId({ code: 'AlreadyExists', message: 'x', details: { holder } })).toBe(holder);
    expect(clashingSandboxId({ code: 'AlreadyExists', message: 'failed to run sandbox: y', cause: { details: { holder } } })).toBe(holder);
    expect(
      clashingSandboxId({
        code: 'AlreadyExists',
        message: `failed to reserve sandbox name "a_b_c_0": name "a_b_c_0" is reserved for "${holder}"`,
      }),
    ).toBe(holder);
    expect(clashingSandboxId({ code: 'CniError', message: `is reserved for "${holder}"` })).toBeUndefined();
    expect(clashingSandboxId(undefined)).toBeUndefined();
  });

  it('round-trips through crictl JSON and YAML, keeping fields the form does not edit', () => {
    const text = JSON.stringify({
      metadata: { name: 'a', namespace: 'b', uid: 'u', attempt: 2 },
      log_directory: '/logs',
      port_mappings: [{ protocol: 'udp', container_port: 53, host_port: 5353 }],
      annotations: { 'kubernetes.io/egress-bandwidth': '512Ki' },
      linux: { sysctls: { 'net.ipv4.ip_forward': '1' }, security_context: { namespace_options: { network: 2, pid: 1 } } },
      Hostname: 'h',
      bogus: true,
    });
    const r = importCrictl(text);
    expect(r.errors).toEqual([]);
    expect(r.warnings.join('\n')).toMatch(/bogus: unknown key/);
    expect(r.warnings.join('\n')).toMatch(/enum name; crictl needs the number \(1\)/);
    expect(r.warnings.join('\n')).toMatch(/written "Hostname"/);
    const form = fromConfig(r.config!);
    expect(form.network).toBe('host');
    expect(form.egress).toEqual({ value: '512', unit: 'Ki' });
    expect(form.hostname).toBe('h');
    const out = JSON.parse(exportCrictl(toConfig(form), 'json'));
    expect(out.log_directory).toBe('/logs');
    expect(out.port_mappings[0]).toEqual({ protocol: 1, container_port: 53, host_port: 5353, host_ip: '' });
    expect(out.linux.sysctls).toEqual({ 'net.ipv4.ip_forward': '1' });
    expect(out.linux.security_context.namespace_options).toMatchObject({ network: 2, pid: 1 });
    const yaml = exportCrictl(toConfig(form), 'yaml');
    expect(importCrictl(yaml).config).toMatchObject({
      metadata: { name: 'a' },
      annotations: { 'kubernetes.io/egress-bandwidth': '512Ki' },
    });
  });

  it('reports unparseable input and a missing metadata as errors', () => {
    expect(importCrictl('{ nope').errors[0]).toMatch(/not valid JSON or YAML/);
    expect(importCrictl('{"hostname": "x"}').errors[0]).toMatch(/metadata is required/);
    expect(importCrictl('{"metadata": {"name": "x"}, "port_mappings": [{"host_port": "eighty"}]}').errors[0]).toMatch(
      /port_mappings\[0\]\.host_port/,
    );
  });

  it('splits quantities into value and unit for the bandwidth helpers', () => {
    expect(splitQuantity('10M')).toEqual({ value: '10', unit: 'M' });
    expect(splitQuantity('1.5Gi')).toEqual({ value: '1.5', unit: 'Gi' });
    expect(splitQuantity('100000')).toEqual({ value: '100000', unit: '' });
    expect(splitQuantity('1e6')).toEqual({ value: '1e6', unit: '' });
  });

  it("gives a pod made in the form kubelet's log directory, following namespace, name and uid until edited", () => {
    const f = { ...base(), uid: 'u-1' };
    expect(toConfig(f).log_directory).toBe('/var/log/pods/default_web_u-1');
    expect(toConfig({ ...f, namespace: 'prod', uid: 'u-2' }).log_directory).toBe('/var/log/pods/prod_web_u-2');
    // typed: kept as typed, whatever the name becomes; emptied: no log directory at all
    expect(toConfig({ ...f, name: 'api', logDirectory: '/srv/logs/web' }).log_directory).toBe('/srv/logs/web');
    expect('log_directory' in toConfig({ ...f, logDirectory: '' })).toBe(false);
    expect(validateForm({ ...f, logDirectory: 'logs/web' }).logDirectory).toMatch(/absolute path/);
    // a clone gets a new uid: its log directory follows it instead of naming the source pod's
    const source = toConfig(f);
    const clone = fromConfig(asNewPodConfig(PodSandboxConfigSchema.parse(source), 'u-new'));
    expect(toConfig(clone).log_directory).toBe(defaultLogDirectory({ namespace: 'default', name: 'web', uid: 'u-new' }));
    // an imported file's own log directory is kept
    expect(toConfig(fromConfig({ metadata: { name: 'a', namespace: 'b', uid: 'u' }, log_directory: '/logs' })).log_directory).toBe('/logs');
  });

  it("refuses a hostname for a host-network pod, which keeps the host's (the engine would refuse it after the submit)", () => {
    expect(validateForm({ ...base(), hostname: 'web-1' }).hostname).toBeUndefined();
    expect(validateForm({ ...base(), network: 'host', hostname: 'web-1' }).hostname).toMatch(/keeps the host's hostname/);
    expect(validateForm({ ...base(), network: 'host' }).hostname).toBeUndefined();
  });
});
