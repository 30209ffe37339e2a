/** Pure filtering and sorting of the pods table (newest first, like crictl pods). */
import type { SandboxSummary } from '../../../../shared/domain/sandbox';
import type { PodFilters } from './store';

export function matchesLabel(labels: Record<string, string>, selector: string): boolean {
  const s = selector.trim();
  if (!s) return true;
  return s.split(',').every((part) => {
    const [k, ...rest] = part.split('=');
    const key = k!.trim();
    if (rest.length === 0) return key in labels;
    return labels[key] === rest.join('=').trim();
  });
}

export function filterPods(pods: SandboxSummary[], f: PodFilters): SandboxSummary[] {
  const text = f.text.trim().toLowerCase();
  return pods
    .filter((p) => !f.namespace || p.metadata.namespace === f.namespace)
    .filter((p) => !f.state || p.state === f.state)
    .filter((p) => matchesLabel(p.labels, f.label))
    .filter((p) => {
      if (!text) return true;
      const hay = [p.id, p.metadata.name, p.metadata.namespace, p.ip, ...p.additionalIps, ...Object.entries(p.labels).map(([k, v]) => `${k}=${v}`)];
      return hay.some((h) => h.toLowerCase().includes(text));
    })
    .sort((a, b) => (BigInt(b.createdAtNs || '0') > BigInt(a.createdAtNs || '0') ? 1 : -1));
}

export function namespacesOf(pods: SandboxSummary[]): string[] {
  return [...new Set(pods.map((p) => p.metadata.namespace))].sort();
}
