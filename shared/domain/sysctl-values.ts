/**
 * The value forms the kernel accepts for its integer sysctls, checked before anything is acquired so that a value the
 * kernel would refuse (`write /proc/sys/kernel/shmmax: invalid argument` from inside runc, after the network is up)
 * is an InvalidArgument naming the sysctl and the value instead.
 *
 * The grammar is the kernel's number-vector parser (proc_dointvec/proc_doulongvec and their minmax variants): values
 * separated by whitespace, each an optional "-" then a C integer (decimal, 0x hex or 0-prefixed octal) ending at
 * whitespace or the end; no "+", no exponent, no trailing text. Values past the vector's length are ignored, and a
 * shorter vector keeps the current values for the rest. The ranges below were checked by writing to /proc/sys in a
 * fresh IPC and network namespace on Linux 6.x. Sysctls not listed (and string-valued ones such as
 * net.ipv4.tcp_congestion_control) are not checked here.
 */

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const ULONG_MAX = 2n ** 64n - 1n;
/** IPCMNI: the most IPC identifiers of one kind */
const IPCMNI = 32768n;

interface IntegerForm {
  /** how many values the kernel reads (extra ones are ignored) */
  values: number;
  /** the bounds of each value, by position (the last applies to the rest) */
  bounds: Array<[min: bigint, max: bigint]>;
  /** what the value is, for the message */
  describe: string;
  /** an unsigned long (proc_doulongvec): even "-0" is refused */
  unsigned?: boolean;
  /** a relation between the values the kernel also enforces */
  relation?: (v: bigint[]) => string | undefined;
}

const one = (min: bigint, max: bigint, describe: string): IntegerForm => ({ values: 1, bounds: [[min, max]], describe });

const EXACT: Record<string, IntegerForm> = {
  'kernel.shmmax': { ...one(0n, ULONG_MAX, 'an unsigned 64-bit integer (bytes)'), unsigned: true },
  'kernel.shmall': { ...one(0n, ULONG_MAX, 'an unsigned 64-bit integer (pages)'), unsigned: true },
  'kernel.msgmax': one(0n, INT_MAX, `an integer from 0 to ${INT_MAX}`),
  'kernel.msgmnb': one(0n, INT_MAX, `an integer from 0 to ${INT_MAX}`),
  'kernel.msgmni': one(0n, IPCMNI, `an integer from 0 to ${IPCMNI}`),
  'kernel.shmmni': one(0n, IPCMNI, `an integer from 0 to ${IPCMNI}`),
  'kernel.shm_rmid_forced': one(0n, 1n, '0 or 1'),
  'kernel.sem': {
    values: 4,
    bounds: [
      [INT_MIN, INT_MAX],
      [INT_MIN, INT_MAX],
      [INT_MIN, INT_MAX],
      [0n, IPCMNI],
    ],
    describe: `up to four integers "SEMMSL SEMMNS SEMOPM SEMMNI" (SEMMNI from 0 to ${IPCMNI})`,
  },
  'fs.mqueue.msg_max': one(1n, 65536n, 'an integer from 1 to 65536'),
  'fs.mqueue.msg_default': one(1n, 65536n, 'an integer from 1 to 65536'),
  'fs.mqueue.msgsize_max': one(128n, 16777216n, 'an integer from 128 to 16777216'),
  'fs.mqueue.msgsize_default': one(128n, 16777216n, 'an integer from 128 to 16777216'),
  'fs.mqueue.queues_max': one(INT_MIN, INT_MAX, 'a 32-bit integer'),
  'net.core.somaxconn': one(0n, INT_MAX, `an integer from 0 to ${INT_MAX}`),
  'net.ipv4.ip_forward': one(INT_MIN, INT_MAX, 'an integer (0 or 1)'),
  'net.ipv4.ip_unprivileged_port_start': one(0n, 65535n, 'a port number'),
  'net.ipv4.ip_local_port_range': {
    values: 2,
    bounds: [[1n, 65535n]],
    describe: 'two port numbers "LOW HIGH" from 1 to 65535',
    relation: ([low, high]) => (high !== undefined && low! > high ? `the low port ${low} is above the high port ${high}` : undefined),
  },
  'net.ipv4.ping_group_range': { values: 2, bounds: [[0n, INT_MAX]], describe: 'two group ids "LOW HIGH"' },
  'net.ipv4.tcp_rmem': { values: 3, bounds: [[INT_MIN, INT_MAX]], describe: 'up to three integers "MIN DEFAULT MAX" (bytes)' },
  'net.ipv4.tcp_wmem': { values: 3, bounds: [[INT_MIN, INT_MAX]], describe: 'up to three integers "MIN DEFAULT MAX" (bytes)' },
  'net.ipv4.tcp_mem': { values: 3, bounds: [[LONG_MIN, LONG_MAX]], describe: 'up to three integers "LOW PRESSURE HIGH" (pages)' },
};

/** net.ipv4.tcp_* sysctls that hold text, not numbers */
const TCP_TEXT = new Set([
  'tcp_congestion_control',
  'tcp_allowed_congestion_control',
  'tcp_available_congestion_control',
  'tcp_fastopen_key',
]);
const INT = one(INT_MIN, INT_MAX, 'a 32-bit integer');

/** The kernel's form for a sysctl, by its segments (so "net/ipv4/conf/eth0.100/rp_filter" keeps the dotted ifname). */
function formOf(segments: string[]): IntegerForm | undefined {
  const dotted = segments.join('.');
  const exact = EXACT[dotted];
  if (exact) return exact;
  const [top, family, group, , leaf] = segments;
  if (top !== 'net') return undefined;
  // every per-interface ipv4/ipv6 setting is an integer, except IPv6's stable_secret (an address)
  if ((family === 'ipv4' || family === 'ipv6') && group === 'conf' && segments.length === 5 && leaf !== 'stable_secret') return INT;
  if (family === 'ipv4' && group?.startsWith('tcp_') && segments.length === 3 && !TCP_TEXT.has(group)) return INT;
  return undefined;
}

/** The kernel's C-integer token: optional minus, then 0x-hex, 0-octal or decimal. */
function parseKernelInteger(token: string): bigint | undefined {
  const m = /^(-?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.exec(token);
  if (!m) return undefined;
  const digits = m[2]!;
  const magnitude = /^0[xX]/.test(digits)
    ? BigInt(digits)
    : digits.length > 1 && digits.startsWith('0')
      ? BigInt(`0o${digits.slice(1)}`)
      : BigInt(digits);
  return m[1] ? -magnitude : magnitude;
}

/**
 * Why the kernel would refuse `value` for the sysctl `name` (dotted or slashed), or undefined when it would take it
 * or when the sysctl is not one whose form is known here.
 */
export function sysctlValueFormProblem(name: string, value: string): string | undefined {
  const form = formOf(name.includes('/') ? name.split('/') : name.split('.'));
  if (!form) return undefined;
  const tokens = value.trim().split(/\s+/).slice(0, form.values);
  const values: bigint[] = [];
  for (const [i, token] of tokens.entries()) {
    const n = parseKernelInteger(token);
    const [min, max] = form.bounds[Math.min(i, form.bounds.length - 1)]!;
    if (n === undefined || (form.unsigned && token.startsWith('-')))
      return `value ${JSON.stringify(value)} is not ${form.describe}: ${JSON.stringify(token)} is not ${form.unsigned ? 'an unsigned' : 'an'} integer; the kernel would refuse the write`;
    if (n < min || n > max)
      return `value ${JSON.stringify(value)} is not ${form.describe}: ${token} is out of range ${min}..${max}; the kernel would refuse the write`;
    values.push(n);
  }
  const relation = form.relation?.(values);
  return relation ? `value ${JSON.stringify(value)}: ${relation}; the kernel would refuse the write` : undefined;
}
