/**
 * A sysctl value the kernel refuses is an InvalidArgument naming the sysctl and the value before anything is
 * acquired (the kernel's integer forms and ranges, as measured by writing to /proc/sys in fresh namespaces), and a
 * refusal that still comes back from runc is an InvalidArgument too, not a RuntimeError.
 */
import { describe, expect, it } from 'vitest';
import { checkSysctl, sysctlWriteRefusal } from '../../electron/engine/runtime/sysctl-rules';
import { runConfigIssues } from '../../shared/domain/config-checks';
import { PodSandboxConfigSchema } from '../../shared/domain/config';
import { sysctlValueFormProblem } from '../../shared/domain/sysctl-values';

const own = { network: true, ipc: true, uts: true };

describe("the kernel's integer sysctl forms", () => {
  it('accepts what the kernel takes: C integers (0x hex, 0 octal), whitespace, extra values ignored', () => {
    const ok: Array<[string, string]> = [
      ['kernel.shmmax', '18446744073709551615'],
      ['kernel.shmmax', '0x10'],
      ['kernel.shmmax', '010'],
      ['kernel.shmmax', ' 7 '],
      ['kernel.shmmax', '7 8'],
      ['kernel.msgmax', '-0'],
      ['kernel.msgmni', '32768'],
      ['kernel.shm_rmid_forced', '1'],
      ['kernel.sem', '250 32000 32 128'],
      ['kernel.sem', '250\t32000'],
      ['kernel.sem', '-1 32000 32 128'],
      ['fs.mqueue.msg_max', '65536'],
      ['fs.mqueue.queues_max', '-1'],
      ['net.ipv4.ip_local_port_range', '1024 65000'],
      ['net.ipv4.ping_group_range', '0\t2147483647'],
      ['net.ipv4.conf.all.rp_filter', '2'],
      ['net/ipv4/conf/eth0.100/rp_filter', '1'],
      ['net.ipv4.tcp_rmem', '4096 131072 6291456'],
      // text-valued and unlisted sysctls are left to the kernel
      ['net.ipv4.tcp_congestion_control', 'reno'],
      ['net.ipv6.conf.all.stable_secret', 'fd00::1'],
      ['net.netfilter.nf_conntrack_max', 'whatever'],
    ];
    for (const [name, value] of ok) expect(sysctlValueFormProblem(name, value), `${name}=${JSON.stringify(value)}`).toBeUndefined();
  });

  it('refuses what the kernel refuses, naming the value and why', () => {
    const bad: Array<[string, string, RegExp]> = [
      ['kernel.shmmax', 'abc', /value "abc" is not an unsigned 64-bit integer \(bytes\): "abc" is not an unsigned integer/],
      ['kernel.shmmax', '-1', /"-1" is not an unsigned integer/],
      ['kernel.shmmax', '-0', /"-0" is not an unsigned integer/],
      ['kernel.shmmax', '18446744073709551616', /out of range 0\.\.18446744073709551615/],
      ['kernel.shmmax', '1e3', /"1e3" is not an unsigned integer/],
      ['kernel.shmmax', '+5', /"\+5"/],
      ['kernel.msgmax', '2147483648', /out of range 0\.\.2147483647/],
      ['kernel.msgmax', '5abc', /"5abc" is not an integer/],
      ['kernel.msgmax', '08', /"08" is not an integer/],
      ['kernel.msgmni', '32769', /out of range 0\.\.32768/],
      ['kernel.shm_rmid_forced', '2', /is not 0 or 1/],
      ['kernel.sem', '250 32000 32 40000', /40000 is out of range 0\.\.32768/],
      ['fs.mqueue.msg_max', '0', /out of range 1\.\.65536/],
      ['fs.mqueue.msgsize_max', '127', /out of range 128\.\.16777216/],
      ['net.core.somaxconn', '-1', /out of range/],
      ['net.ipv4.ip_local_port_range', '65000 1024', /the low port 65000 is above the high port 1024/],
      ['net.ipv4.ip_local_port_range', '0 65535', /0 is out of range 1\.\.65535/],
      ['net.ipv4.conf.lo.rp_filter', 'abc', /"abc" is not an integer/],
      ['net.ipv4.tcp_keepalive_time', 'soon', /"soon" is not an integer/],
    ];
    for (const [name, value, why] of bad) expect(sysctlValueFormProblem(name, value), `${name}=${JSON.stringify(value)}`).toMatch(why);
  });

  it('the run checks and checkSysctl refuse it with the field named', () => {
    const config = PodSandboxConfigSchema.parse({
      metadata: { name: 'p', namespace: 'n', uid: 'u' },
      linux: { sysctls: { 'kernel.shmmax': 'lots', 'kernel.msgmax': '100' } },
    });
    expect(runConfigIssues(config)).toEqual([
      {
        path: ['linux', 'sysctls', 'kernel.shmmax'],
        message: expect.stringMatching(/^value "lots" is not an unsigned 64-bit integer .*the kernel would refuse the write/),
      },
    ]);
    expect(() => checkSysctl('kernel.shmmax', own, 'lots')).toThrow(/^linux\.sysctls\["kernel\.shmmax"\]: value "lots"/);
    expect(() => checkSysctl('kernel.shmmax', own, '4096')).not.toThrow();
  });

  it("a sysctl write runc reports as failed is the caller's InvalidArgument, naming the sysctl and the value", () => {
    const spec = { linux: { sysctl: { 'net.ipv4.tcp_syncookies': '-1' } } };
    const e = sysctlWriteRefusal(
      [
        'runc run failed: unable to start container process: error during container init: write /proc/sys/net/ipv4/tcp_syncookies: invalid argument',
      ],
      spec,
    );
    expect(e?.code).toBe('InvalidArgument');
    expect(e?.message).toBe('linux.sysctls["net.ipv4.tcp_syncookies"]: the kernel refused value "-1" (invalid argument)');
    const missing = sysctlWriteRefusal(['open /proc/sys/net/ipv4/nope: no such file or directory'], {
      linux: { sysctl: { 'net/ipv4/nope': '1' } },
    });
    expect(missing?.message).toBe('linux.sysctls["net/ipv4/nope"]: the kernel has no sysctl "net/ipv4/nope" (no such file or directory)');
    expect(sysctlWriteRefusal(['container_linux.go: starting container process caused: exec: "sh": not found'], spec)).toBeUndefined();
  });
});
