/**
 * `podscope port-forward` ends when its pod goes, saying how (exit 3 removed, 5 stopped). A remove of a running pod
 * stops it first, so the pod reads NOTREADY for a while before it is gone: that is a removal, not a stop.
 */
import { describe, expect, it } from 'vitest';
import { PodscopeError } from '../../shared/domain/errors';
import { podGone } from '../../electron/cli/commands/port-forward';

/** a status that answers from a script of states over time: 'ready', 'stopped' or 'removed' */
function scripted(states: Array<'ready' | 'stopped' | 'removed'>) {
  let i = 0;
  return async () => {
    const s = states[Math.min(i++, states.length - 1)]!;
    if (s === 'removed') throw new PodscopeError('NotFound', 'pod sandbox not found');
    return { state: s === 'ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY', metadata: { name: 'web' } };
  };
}

describe('port-forward: how the pod went', () => {
  it('a pod that reads NOTREADY and then is gone was removed (a remove stops it first)', async () => {
    const why = await podGone(scripted(['ready', 'stopped', 'stopped', 'removed']), 'id', 'web', new AbortController().signal, 8, 200);
    expect(why).toMatchObject({ code: 'NotFound', message: 'pod web was removed; port-forward ended' });
  });

  it('a pod that stays NOTREADY was stopped', async () => {
    const why = await podGone(scripted(['ready', 'stopped']), 'id', 'web', new AbortController().signal, 8, 40);
    expect(why).toMatchObject({ code: 'FailedPrecondition', message: 'pod web was stopped; port-forward ended' });
  });

  it('a failure to ask is not the pod going away', async () => {
    let calls = 0;
    const flaky = async () => {
      if (++calls < 3) throw new PodscopeError('Unavailable', 'connection refused');
      throw new PodscopeError('NotFound', 'gone');
    };
    const why = await podGone(flaky, 'id', 'web', new AbortController().signal, 5);
    expect(calls).toBe(3);
    expect(why?.code).toBe('NotFound');
  });
});
