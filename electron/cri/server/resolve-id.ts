/**
 * Sandbox id lookup as containerd's truncated index does it (FACTS C1): an exact id or any unique prefix (crictl
 * shows 13-char ids). Done here, over engine.list(), so every RPC accepts prefixes whatever the engine's own lookup.
 * Deviation: an empty id or an ambiguous prefix is InvalidArgument (containerd returns an unclassified error).
 */
import { invalidArgument } from '../../../shared/domain/errors';
import type { CriEngine } from './handler';

export type ResolvedId = { found: true; id: string } | { found: false; id: string };

export async function resolveSandboxId(engine: CriEngine, idOrPrefix: string): Promise<ResolvedId> {
  if (idOrPrefix === '') throw invalidArgument('pod_sandbox_id must not be empty');
  const ids = (await engine.list()).map((s) => s.id);
  if (ids.includes(idOrPrefix)) return { found: true, id: idOrPrefix };
  const matches = ids.filter((id) => id.startsWith(idOrPrefix));
  if (matches.length === 1) return { found: true, id: matches[0]! };
  if (matches.length > 1) throw invalidArgument(`pod sandbox id prefix "${idOrPrefix}" is ambiguous: it matches ${matches.length} sandboxes`);
  return { found: false, id: idOrPrefix };
}
