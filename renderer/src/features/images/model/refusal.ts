/**
 * A refused image removal names the containers that use it by their 64-hex ids; a person knows them by name. Every
 * id of a container the endpoint lists becomes "name (short id)"; an id it does not list stays whole, since it is all
 * there is to go on.
 */
import { PodscopeError } from '../../../../../shared/domain/errors';
import type { ContainerSummary } from '../../../../../shared/domain/container';

const ID = /\b[0-9a-f]{64}\b/g;

export function nameContainers(message: string, containers: Pick<ContainerSummary, 'id' | 'metadata'>[]): string {
  const byId = new Map(containers.map((c) => [c.id, c]));
  return message.replace(ID, (id) => {
    const c = byId.get(id);
    return c ? `${c.metadata.name} (${id.slice(0, 12)})` : id;
  });
}

/** the same error with its message (not its details, which keep the ids) in names */
export function withContainerNames(error: unknown, containers: Pick<ContainerSummary, 'id' | 'metadata'>[]): unknown {
  if (!(error instanceof Error)) return error;
  const message = nameContainers(error.message, containers);
  if (message === error.message) return error;
  if (error instanceof PodscopeError) {
    const named = new PodscopeError(error.code, message, { details: error.details, cause: error.cause });
    return named;
  }
  return new Error(message);
}
