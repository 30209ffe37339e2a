/**
 * Container OCI spec details critest (cri-tools 1.26) caught. Which capabilities a container gets (containerd's WithCapabilities and WithAllCurrentCapabilities): "all" means what
 * the runtime itself holds, because runc cannot hand out a capability its caller lacks; critest's "Privileged is true"
 * and "adding ALL capabilities" specs failed on a host without CAP_SYS_RESOURCE when "all" meant every known one.
 */
import { describe, expect, it } from 'vitest';
import { ContainerConfigSchema } from '../../shared/domain/container';
import { ALL_CAPABILITIES, capabilities, capabilitiesFromStatus, rootfsPropagation } from '../../electron/engine/runtime/container-spec';
import { DEFAULT_CAPABILITIES } from '../../electron/engine/runtime/oci-spec';
import { mountContaining, parseMountInfo, propagationOf } from '../../electron/engine/netns/mountinfo';

const config = (security_context: object) =>
  ContainerConfigSchema.parse({ metadata: { name: 'c' }, image: { image: 'busybox' }, linux: { security_context } });

const HELD = ALL_CAPABILITIES.filter((c) => c !== 'CAP_SYS_RESOURCE');

describe('container capabilities', () => {
  it('reads the effective set from /proc/<pid>/status, bit n = capability n', () => {
    expect(capabilitiesFromStatus('Name:\tx\nCapEff:\t000001fffeffffff\n')).toEqual(HELD);
    expect(capabilitiesFromStatus('CapEff:\t0000000000000001\n')).toEqual(['CAP_CHOWN']);
    expect(capabilitiesFromStatus('CapEff:\t0000000000000000\n')).toEqual([]);
    expect(capabilitiesFromStatus('no such line')).toBeUndefined();
  });

  it('privileged gets exactly what the engine holds', () => {
    expect(capabilities(config({ privileged: true }), HELD)).toEqual(HELD);
    expect(capabilities(config({ privileged: true }))).toEqual(ALL_CAPABILITIES);
  });

  it('add ALL gets what the engine holds, minus what is dropped by name; drop ALL then add keeps only the adds', () => {
    const c = capabilities(config({ capabilities: { add_capabilities: ['ALL'], drop_capabilities: ['CHOWN'] } }), HELD);
    expect(c).not.toContain('CAP_SYS_RESOURCE');
    expect(c).not.toContain('CAP_CHOWN');
    expect(c).toHaveLength(HELD.length - 1);
    expect(capabilities(config({ capabilities: { add_capabilities: ['NET_ADMIN'], drop_capabilities: ['ALL'] } }), HELD)).toEqual([
      'CAP_NET_ADMIN',
    ]);
    expect(capabilities(config({}), HELD)).toEqual([...DEFAULT_CAPABILITIES]);
  });
});

describe('rootfs propagation (containerd WithMounts)', () => {
  const mount = (propagation: number) => ({
    container_path: '/m',
    host_path: '/h',
    readonly: false,
    selinux_relabel: false,
    recursive_read_only: false,
    propagation,
  });
  it('Bidirectional makes the root rshared, HostToContainer rslave, private mounts leave runc its default', () => {
    expect(rootfsPropagation([mount(0), mount(2), mount(1)])).toBe('rshared');
    expect(rootfsPropagation([mount(0), mount(1)])).toBe('rslave');
    expect(rootfsPropagation([mount(0)])).toBeUndefined();
    expect(rootfsPropagation([])).toBeUndefined();
  });
});

describe('the mount a volume source lives on (containerd ensureShared / ensureSharedOrSlave)', () => {
  const info = parseMountInfo(
    [
      '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
      '40 27 0:50 / /data rw shared:7 - tmpfs tmpfs rw',
      '41 40 0:51 / /data/sub rw master:7 - tmpfs tmpfs rw',
      '42 27 0:52 / /database rw - tmpfs tmpfs rw',
      '',
    ].join('\n'),
  );
  it('is the longest mount point that is the path or a parent, by path components', () => {
    expect(mountContaining(info, '/data/x/y')?.mountPoint).toBe('/data');
    expect(mountContaining(info, '/data/sub')?.mountPoint).toBe('/data/sub');
    expect(mountContaining(info, '/database/x')?.mountPoint).toBe('/database');
    expect(mountContaining(info, '/etc')?.mountPoint).toBe('/');
  });
  it('reads shared, slave and private from the optional fields', () => {
    expect(info.map(propagationOf)).toEqual(['private', 'shared', 'slave', 'private']);
  });
});
