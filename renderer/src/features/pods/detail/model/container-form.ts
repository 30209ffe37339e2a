/**
 * The "Add container" form as plain strings, and the CRI ContainerConfig it amounts to (what the preview shows and
 * containers.create receives). Errors are keyed by field so each input shows its own.
 * Ports: CRI's ContainerConfig has none (host ports are the pod's port_mappings); kubelet records a container's
 * declared ports in the annotation io.kubernetes.container.ports, and so does this form.
 */
import type { KeyValueRow } from '../../../../lib/ui/KeyValueEditor';
import { ContainerConfigSchema, type ContainerConfig, type ContainerConfigInput } from '../../../../../../shared/domain/container';

/** an environment variable row (the shared key = value editor's row) */
export type EnvRow = KeyValueRow;

export interface ContainerForm {
  name: string;
  image: string;
  /** the program (ENTRYPOINT override), one command line, split like a shell would */
  command: string;
  /** its arguments (CMD override) */
  args: string;
  workingDir: string;
  env: EnvRow[];
  /** declared container ports, "80, 443/tcp, 53/udp" */
  ports: string;
  /** cores, e.g. "0.5" (empty: unlimited) */
  cpus: string;
  /** MiB (empty: unlimited) */
  memoryMiB: string;
  cpuShares: string;
  tty: boolean;
  stdin: boolean;
  /** crictl's log_path, relative to the pod's log_directory */
  logPath: string;
}

export const PORTS_ANNOTATION = 'io.kubernetes.container.ports';
/** CFS period kubelet uses when it turns a CPU limit into a quota */
export const CPU_PERIOD_US = 100_000;

let rowSeq = 0;
export const newEnvRow = (k = '', v = ''): EnvRow => ({ key: `env-${++rowSeq}`, k, v });

export function emptyContainerForm(): ContainerForm {
  return {
    name: '',
    image: '',
    command: '',
    args: '',
    workingDir: '',
    env: [],
    ports: '',
    cpus: '',
    memoryMiB: '',
    cpuShares: '',
    tty: false,
    stdin: false,
    logPath: '',
  };
}

/** split a command line on spaces; "double" and 'single' quotes keep spaces */
export function splitWords(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"((?:\\.|[^"\\])*)"|'([^']*)'|(\S+)/g))
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  return out;
}

export function joinWords(words: string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : JSON.stringify(w))).join(' ');
}

export type FormErrors = Partial<Record<string, string>>;

interface DeclaredPort {
  containerPort: number;
  protocol: 'TCP' | 'UDP' | 'SCTP';
}

export function parsePorts(text: string): { ports: DeclaredPort[]; error?: string } {
  const ports: DeclaredPort[] = [];
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const m = /^(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(part);
    const n = m ? Number(m[1]) : NaN;
    if (!m || n < 1 || n > 65535) return { ports, error: `"${part}" is not a port (1-65535, optionally /tcp, /udp or /sctp)` };
    ports.push({ containerPort: n, protocol: (m[2]?.toUpperCase() ?? 'TCP') as DeclaredPort['protocol'] });
  }
  return { ports };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function toContainerConfig(f: ContainerForm): { config: ContainerConfigInput; errors: FormErrors } {
  const errors: FormErrors = {};
  const name = f.name.trim();
  if (!name) errors.name = 'a container needs a name';
  else if (name.length > 63 || !DNS_LABEL.test(name))
    errors.name = 'lower-case letters, digits and "-", at most 63 (a DNS label, as kubelet requires)';
  const image = f.image.trim();
  if (!image) errors.image = 'an image is required';
  else if (/\s/.test(image)) errors.image = 'an image reference has no spaces';
  const envs = f.env.filter((r) => r.k.trim() || r.v);
  for (const r of envs) {
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(r.k.trim())) errors[`env.${r.key}`] = `"${r.k}" is not a variable name`;
  }
  const logPath = f.logPath.trim();
  // the engine joins it under the pod's log directory and refuses one that leaves it
  if (logPath.startsWith('/') || logPath.split('/').includes('..'))
    errors.logPath = 'a path relative to the pod\'s log directory, without ".." (e.g. web_0.log)';
  const { ports, error: portError } = parsePorts(f.ports);
  if (portError) errors.ports = portError;
  const cpus = f.cpus.trim() === '' ? 0 : Number(f.cpus);
  if (!Number.isFinite(cpus) || cpus < 0 || cpus > 1024) errors.cpus = 'cores as a number, e.g. 0.5';
  const mem = f.memoryMiB.trim() === '' ? 0 : Number(f.memoryMiB);
  if (!Number.isFinite(mem) || mem < 0) errors.memoryMiB = 'MiB as a number';
  else if (mem > 0 && mem < 6) errors.memoryMiB = 'at least 6 MiB (runc refuses a smaller memory limit)';
  const shares = f.cpuShares.trim() === '' ? 0 : Number(f.cpuShares);
  if (!Number.isInteger(shares) || shares < 0 || (shares > 0 && shares < 2) || shares > 262144) errors.cpuShares = 'an integer 2-262144';

  const annotations: Record<string, string> = {};
  if (ports.length) annotations[PORTS_ANNOTATION] = JSON.stringify(ports);
  const resources =
    cpus > 0 || mem > 0 || shares > 0
      ? {
          ...(cpus > 0 && { cpu_period: CPU_PERIOD_US, cpu_quota: Math.round(cpus * CPU_PERIOD_US) }),
          ...(mem > 0 && { memory_limit_in_bytes: Math.round(mem * 1024 * 1024) }),
          ...(shares > 0 && { cpu_shares: shares }),
        }
      : undefined;
  const config: ContainerConfigInput = {
    metadata: { name, attempt: 0 },
    image: { image },
    command: splitWords(f.command),
    args: splitWords(f.args),
    ...(f.workingDir.trim() && { working_dir: f.workingDir.trim() }),
    envs: envs.map((r) => ({ key: r.k.trim(), value: r.v })),
    ...(Object.keys(annotations).length && { annotations }),
    log_path: f.logPath.trim() || (name ? `${name}_0.log` : ''),
    ...(f.stdin && { stdin: true }),
    ...(f.tty && { tty: true }),
    ...(resources && { linux: { resources } }),
  };
  if (Object.keys(errors).length === 0) {
    const parsed = ContainerConfigSchema.safeParse(config);
    if (!parsed.success) errors.form = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  }
  return { config, errors };
}

/** an imported crictl file back into the form (what the form cannot show is reported, not dropped silently) */
export function fromContainerConfig(c: ContainerConfig): { form: ContainerForm; dropped: string[] } {
  const dropped: string[] = [];
  const r = c.linux?.resources;
  let ports = '';
  try {
    const declared = c.annotations[PORTS_ANNOTATION] ? (JSON.parse(c.annotations[PORTS_ANNOTATION]) as DeclaredPort[]) : [];
    ports = declared
      .map((p) => (p.protocol && p.protocol !== 'TCP' ? `${p.containerPort}/${p.protocol.toLowerCase()}` : String(p.containerPort)))
      .join(', ');
  } catch {
    dropped.push(`annotations.${PORTS_ANNOTATION} (not JSON)`);
  }
  if (c.mounts.length) dropped.push('mounts');
  if (c.devices.length) dropped.push('devices');
  if (Object.keys(c.labels).length) dropped.push('labels');
  if (Object.keys(c.annotations).some((k) => k !== PORTS_ANNOTATION)) dropped.push('annotations');
  if (c.linux?.security_context) dropped.push('linux.security_context');
  const form: ContainerForm = {
    name: c.metadata.name,
    image: c.image.image,
    command: joinWords(c.command),
    args: joinWords(c.args),
    workingDir: c.working_dir,
    env: c.envs.map((e) => newEnvRow(e.key, e.value)),
    ports,
    cpus: r && r.cpu_quota > 0 && r.cpu_period > 0 ? String(+(r.cpu_quota / r.cpu_period).toFixed(3)) : '',
    memoryMiB: r && r.memory_limit_in_bytes > 0 ? String(+(r.memory_limit_in_bytes / 1024 / 1024).toFixed(2)) : '',
    cpuShares: r && r.cpu_shares > 0 ? String(r.cpu_shares) : '',
    tty: c.tty,
    stdin: c.stdin,
    logPath: c.log_path,
  };
  return { form, dropped };
}
