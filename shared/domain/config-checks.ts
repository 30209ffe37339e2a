/**
 * What the engine refuses before it acquires anything for a RunPodSandbox, beyond the shape PodSandboxConfigSchema
 * checks: values that would only fail later, inside something already holding a netns, an IP or a container —
 * Node's spawn refusing a NUL in a plugin's environment (CNI_ARGS), portmap refusing a host_ip that is not an IP
 * after the bridge plugin allocated one, runc refusing a sysctl after the network is up, a newline in a DNS entry
 * that would add lines to resolv.conf. Each problem names its field (`metadata.name`, `port_mappings[0].host_ip`,
 * `linux.sysctls["net."]`).
 *
 * Kept apart from PodSandboxConfigSchema on purpose: that schema also decodes configs other runtimes report
 * (containerd's verbose status), which must stay readable even when Podscope itself would not run them.
 */
import { PodSandboxConfigSchema, type PodSandboxConfig } from './config';
import { ipFamilyOf } from './ip';
import { sysctlValueFormProblem } from './sysctl-values';
import { lazySchema } from './lazy-schema';

/** C0 controls and DEL. */
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Controls allowed in a sysctl value: tab (the kernel's number-vector parsers take any whitespace). */
const CONTROL_EXCEPT_TAB = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function describeControl(s: string, re: RegExp): string {
  const c = re.exec(s)![0];
  return `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

export interface ConfigIssue {
  path: Array<string | number>;
  message: string;
}

/**
 * A sysctl name as runc writes it: a dotted (`net.ipv4.ip_forward`) or slashed (`net/ipv4/ip_forward`) path under
 * /proc/sys, every segment non-empty and not `.`/`..`, no whitespace or control characters. Returns why not, or
 * undefined when well-formed.
 */
export function sysctlNameProblem(name: string): string | undefined {
  if (name === '') return 'a sysctl name must not be empty';
  if (CONTROL.test(name)) return `a sysctl name must not contain control characters (found ${describeControl(name, CONTROL)})`;
  if (/\s/.test(name)) return 'a sysctl name must not contain whitespace';
  const segments = name.split(/[./]/);
  if (segments.length < 2) return `"${name}" is not a sysctl path: it needs at least two segments (e.g. net.ipv4.ip_forward)`;
  if (segments.some((s) => s === '')) return 'a sysctl name must not have empty segments (a leading, trailing or doubled "." or "/")';
  return undefined;
}

/** A sysctl value runc can write as one line: non-empty, no NUL, newline or other control character but tab. */
export function sysctlValueProblem(value: string): string | undefined {
  if (value.trim() === '') return 'a sysctl value must not be empty';
  if (CONTROL_EXCEPT_TAB.test(value))
    return `a sysctl value must not contain NUL, newlines or other control characters (found ${describeControl(value, CONTROL_EXCEPT_TAB)})`;
  return undefined;
}

export function runConfigIssues(config: PodSandboxConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const noControl = (path: ConfigIssue['path'], value: string, why: string) => {
    if (CONTROL.test(value))
      issues.push({ path, message: `must not contain control characters (found ${describeControl(value, CONTROL)}): ${why}` });
  };
  const noNul = (path: ConfigIssue['path'], value: string, why: string) => {
    if (value.includes('\u0000')) issues.push({ path, message: `must not contain NUL (U+0000): ${why}` });
  };

  for (const field of ['name', 'namespace', 'uid'] as const) {
    noControl(['metadata', field], config.metadata[field], 'it is passed to CNI plugins in CNI_ARGS and to runc in annotations');
  }
  noControl(['hostname'], config.hostname, "it is written to the pod's hostname and hosts files and set with sethostname(2)");
  noControl(['log_directory'], config.log_directory, 'it is passed to runc as an annotation');
  for (const key of ['servers', 'searches', 'options'] as const) {
    config.dns_config?.[key].forEach((v, i) => noControl(['dns_config', key, i], v, "each entry is one line of the pod's resolv.conf"));
  }
  for (const [map, what] of [
    ['labels', 'labels'],
    ['annotations', 'annotations'],
  ] as const) {
    for (const [k, v] of Object.entries(config[map])) {
      noControl([map, k], k, `${what} keys are stored and passed on as names`);
      noNul([map, k], v, `${what} are stored and passed to CNI plugins and runc, where a NUL ends the string`);
    }
  }
  config.port_mappings.forEach((p, i) => {
    // containerd's toCNIPortMappings drops host_port <= 0 before CNI, so what such a mapping carries is never used.
    if (p.host_port <= 0 || p.host_ip === '') return;
    if (ipFamilyOf(p.host_ip) === 0) {
      issues.push({
        path: ['port_mappings', i, 'host_ip'],
        message: `${JSON.stringify(p.host_ip)} is not an IP address (IPv4 or IPv6, no zone or prefix); portmap would reject it after the pod got its IP`,
      });
    }
  });
  const linux = config.linux;
  if (linux) {
    noControl(['linux', 'cgroup_parent'], linux.cgroup_parent, 'it is a cgroup path');
    for (const [name, value] of Object.entries(linux.sysctls)) {
      const problem = sysctlNameProblem(name) ?? sysctlValueProblem(value);
      const formProblem = problem ? undefined : sysctlValueFormProblem(name, value);
      if (problem)
        issues.push({ path: ['linux', 'sysctls', name], message: `${problem}; runc would refuse it after the network is set up` });
      else if (formProblem) issues.push({ path: ['linux', 'sysctls', name], message: `${formProblem}, after the network is set up` });
    }
  }
  return issues;
}

/** PodSandboxConfigSchema plus the checks above: the config a RunPodSandbox accepts. */
export const RunPodSandboxConfigSchema = lazySchema(() =>
  PodSandboxConfigSchema.superRefine((config, ctx) => {
    for (const issue of runConfigIssues(config)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  }),
);
