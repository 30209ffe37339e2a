/**
 * Import and export of crictl pod-config files for the form: the shared reader (the CLI uses the same one), plus
 * what only the form needs.
 */
import type { PodSandboxConfigInput } from '../../../../../shared/domain/config';
import { exportPodConfig, importPodConfig } from '../../../../../shared/domain/crictl-format';

export interface ImportResult {
  config?: PodSandboxConfigInput;
  warnings: string[];
  errors: string[];
}

export function importCrictl(text: string): ImportResult {
  const r = importPodConfig(text);
  const warnings = [...r.warnings];
  if (r.config && !r.config.metadata.uid) warnings.push('metadata.uid is empty: a new uid was generated (crictl does the same)');
  return { config: r.errors.length === 0 ? r.input : undefined, warnings, errors: r.errors };
}

export const exportCrictl = exportPodConfig;
