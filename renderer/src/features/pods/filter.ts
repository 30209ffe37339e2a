/** Pure filtering and sorting of the pods table (newest first, like crictl pods). */
import type { SandboxSummary } from '../../../../shared/domain/sandbox';
import { matchesSelector, parseLabelSelector } from '../../../../shared/domain/label-selector';
import type { PodFilters } from './store';

/** Kubernetes selector syntax; a selector with a syntax error matches nothing (the toolbar shows the error). */
export function matchesLabel(labels: Record<string, string>, selector: string): boolean {
  const parsed = parseLabelSelector(selector);
  return parsed.ok && matchesSelector(labels, parsed.requirements);
}

/** the syntax error of the label selector, or undefined when it parses */
export function labelSelectorError(selector: string): string | undefined {
  const parsed = parseLabelSelector(selector);
  return parsed.ok ? undefined : `${parsed.error} (at column ${parsed.position + 1})`;
}

export function filterPods(pods: SandboxSummary[], f: PodFilters): SandboxSummary[] {
  const text = f.text.trim().toLowerCase();
  const selector = parseLabelSelector(f.label);
  return pods
    .filter((p) => !f.namespace || p.metadata.namespace === f.namespace)
    .filter((p) => !f.state || p.state === f.state)
    .filter((p) => selector.ok && matchesSelector(p.labels, selector.requirements))
    .filter((p) => {
      if (!text) return true;
      const hay = [
        p.id,
        p.metadata.name,
        p.metadata.namespace,
        p.ip,
        ...p.additionalIps,
        ...Object.entries(p.labels).map(([k, v]) => `${k}=${v}`),
      ];
      return hay.some((h) => h.toLowerCase().includes(text));
    })
    .sort((a, b) => (BigInt(b.createdAtNs || '0') > BigInt(a.createdAtNs || '0') ? 1 : -1));
}

export function namespacesOf(pods: SandboxSummary[]): string[] {
  return [...new Set(pods.map((p) => p.metadata.namespace))].sort();
}
