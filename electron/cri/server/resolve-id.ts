/**
 * Sandbox ids on the wire: an exact id or any unique prefix (crictl shows 13-char ids), as containerd's truncindex.
 * The engine resolves prefixes itself (engine.status/stop/remove, electron/engine/pods/id-index.ts) with the same
 * rules, so the server passes ids straight through; it used to list every sandbox per call to resolve them here,
 * which made PodSandboxStatus cost a liveness check of every sandbox. Only the empty id is refused up front, so
 * the InvalidArgument does not depend on the engine (containerd returns an unclassified error for it).
 */
import { invalidArgument } from '../../../shared/domain/errors';

export function requireSandboxId(id: string): string {
  if (id === '') throw invalidArgument('pod_sandbox_id must not be empty');
  return id;
}

export function requireContainerId(id: string): string {
  if (id === '') throw invalidArgument('container_id must not be empty');
  return id;
}
