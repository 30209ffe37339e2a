/** A refused removal names its containers by name and short id; ids the endpoint does not list stay whole. */
import { describe, expect, it } from 'vitest';
import { PodscopeError } from '../../../../../shared/domain/errors';
import { nameContainers, withContainerNames } from './refusal';

const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const containers = [{ id: A, metadata: { name: 'web', attempt: 0 } }];

describe('image removal refusal', () => {
  it('names each known container by name and short id, keeps an unknown id whole', () => {
    expect(nameContainers(`image busybox (sha256:x) is in use by container(s) ${A}, ${B}`, containers)).toBe(
      `image busybox (sha256:x) is in use by container(s) web (${A.slice(0, 12)}), ${B}`,
    );
  });

  it('keeps the code and the details (with the full ids) of the engine error', () => {
    const e = new PodscopeError('FailedPrecondition', `in use by container(s) ${A}`, { details: { containers: [A] } });
    const named = withContainerNames(e, containers) as PodscopeError;
    expect(named.code).toBe('FailedPrecondition');
    expect(named.message).toBe(`in use by container(s) web (${A.slice(0, 12)})`);
    expect(named.details).toEqual({ containers: [A] });
  });
});
