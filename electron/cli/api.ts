/** Gives a command the SandboxApi it needs: a CRI endpoint when --endpoint is set, else an engine in this process. */
import type { ContainerApi } from '../../shared/domain/container';
import type { SandboxApi } from '../../shared/domain/sandbox';
import { engineOptionsFromFlags, type Flags } from './args';

/**
 * @param access "read" for verbs that only look (pods, inspectp): the engine is opened read-only, takes no lock and
 * changes nothing on the host, so it is safe beside a daemon on the same (or a shared) run dir.
 */
export async function withApi<T>(
  flags: Flags,
  fn: (api: SandboxApi & ContainerApi) => Promise<T>,
  access: 'read' | 'write' = 'write',
): Promise<T> {
  if (typeof flags.endpoint === 'string') {
    const { createCriEndpointApi } = await import('../cri/client');
    const api = createCriEndpointApi(flags.endpoint);
    try {
      return await fn(api);
    } finally {
      (api as { close?: () => void }).close?.();
    }
  }
  const { createEngine } = await import('../engine/api');
  // a one-shot command's engine closes right after the verb: a probe-on-ready would only be started to be canceled
  const engine = await createEngine({ ...engineOptionsFromFlags(flags), probeOnReady: false }, { readOnly: access === 'read' });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}
