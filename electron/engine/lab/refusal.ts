/** The lab's refusals before anything runs or is written: an invalid conflist, and one that shares live pods' networking. */
import { PodscopeError } from '../../../shared/domain/errors';
import type { LabValidation } from '../../../shared/domain/lab';

/** InvalidArgument naming the first problem at its path and line/column; `outcome` says what did not happen */
export function invalidConflist(v: LabValidation, outcome: 'nothing was run' | 'nothing was written'): PodscopeError {
  const first = v.errors[0];
  const where = first?.line !== undefined ? ` (line ${first.line}, column ${first.column})` : '';
  return new PodscopeError(
    'InvalidArgument',
    `conflist refused, ${outcome}: ${first?.path ? `${first.path}: ` : ''}${first?.message ?? 'invalid'}${where}`,
    {
      details: { errors: v.errors },
    },
  );
}

export function sharesLiveNetworking(v: LabValidation): PodscopeError {
  const list = v.conflicts.map((c) => `${c.sandboxName || c.sandboxId.slice(0, 13)} (${c.network}): ${c.shares.join(', ')}`).join('; ');
  return new PodscopeError(
    'FailedPrecondition',
    `this conflist shares host networking with live sandboxes, so a run would touch them: ${list}. Run with force to proceed anyway.`,
    { details: { conflicts: v.conflicts } },
  );
}
