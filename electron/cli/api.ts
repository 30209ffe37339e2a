/** Gives a command the SandboxApi it needs: a CRI endpoint when --endpoint is set, else an engine in this process. */
import type { ContainerApi } from '../../shared/domain/container';
import type { SandboxApi } from '../../shared/domain/sandbox';
import { engineOptionsFromFlags, type Flags } from './args';

export async function withApi<T>(flags: Flags, fn: (api: SandboxApi & ContainerApi) => Promise<T>): Promise<T> {
  if (typeof flags.endpoint === 'string') {
    const { createCriEndpointApi } = await import('../cri/client');
    const api = createCriEndpointApi(flags.endpoint);
    try {
      return await fn(api);
    } finally {
      (api as { close?: () => void }).close?.();
    }
  }
  const { createEngine } = await import('../engine/index');
  const engine = await createEngine(engineOptionsFromFlags(flags));
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}
