/** The lab's capability-args form: text fields as typed, and the capability args they make (or the field at fault). */
import { parseRateInput } from '../../../../../shared/domain/bandwidth';
import type { LabCapabilities } from '../../../../../shared/domain/lab';

export interface CapsForm {
  ports: string;
  ingress: string;
  egress: string;
  dns: string;
  ips: string;
  mac: string;
  cgroupPath: string;
}

export const EMPTY_CAPS_FORM: CapsForm = { ports: '', ingress: '', egress: '', dns: '', ips: '', mac: '', cgroupPath: '' };

const list = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/** a rate typed as bits per second: the one rate parser the pod form, annotations and the CLI use (5M, 512k, 1Gi, 0) */
function rate(text: string, dir: string): { bits?: number; problem?: string } {
  if (text.trim() === '') return {};
  const r = parseRateInput(text);
  if ('error' in r) return { problem: `${dir} bandwidth ${r.error} (bits per second: a number or a quantity such as 5M, 512k or 1Gi)` };
  return { bits: r.bitsPerSecond };
}

/** the form's text fields as capability args; a problem names the field */
export function capabilitiesFrom(f: CapsForm): { caps: LabCapabilities; problem?: string } {
  const caps: LabCapabilities = {};
  const ports = list(f.ports);
  if (ports.length) {
    const mapped = [];
    for (const p of ports) {
      const m = /^(\d+):(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(p);
      if (!m) return { caps, problem: `port mapping ${JSON.stringify(p)}: write HOST:CONTAINER[/tcp|udp|sctp]` };
      mapped.push({
        hostPort: Number(m[1]),
        containerPort: Number(m[2]),
        protocol: (m[3]?.toLowerCase() ?? 'tcp') as 'tcp' | 'udp' | 'sctp',
      });
    }
    caps.portMappings = mapped;
  }
  if (f.ingress.trim() || f.egress.trim()) {
    const ingress = rate(f.ingress, 'ingress');
    const egress = rate(f.egress, 'egress');
    const problem = ingress.problem ?? egress.problem;
    if (problem) return { caps, problem };
    caps.bandwidth = { ingressRate: ingress.bits, egressRate: egress.bits };
  }
  if (list(f.dns).length) caps.dns = { servers: list(f.dns) };
  if (list(f.ips).length) caps.ips = list(f.ips);
  if (f.mac) caps.mac = f.mac;
  if (f.cgroupPath) caps.cgroupPath = f.cgroupPath;
  return { caps };
}
