import { PodscopeError } from '../../../shared/domain/errors';

/**
 * Resolves a full id or any unique prefix (crictl shows 13 characters), as containerd's truncindex does.
 * Returns undefined when nothing matches; an empty or ambiguous prefix is an InvalidArgument error.
 */
export function resolveIdPrefix(ids: Iterable<string>, prefix: string): string | undefined {
  if (prefix === '') throw new PodscopeError('InvalidArgument', "sandbox id prefix can't be empty");
  const matches: string[] = [];
  for (const id of ids) {
    if (id === prefix) return id;
    if (id.startsWith(prefix)) matches.push(id);
  }
  if (matches.length > 1) {
    throw new PodscopeError(
      'InvalidArgument',
      `ambiguous sandbox id prefix ${JSON.stringify(prefix)}: it matches ${matches.length} sandboxes`,
      { details: { matches } },
    );
  }
  return matches[0];
}
