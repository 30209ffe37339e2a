import { describe, expect, it } from 'vitest';
import { judge } from '../../electron/engine/probe/judge';
import type { PlannedConnect } from '../../electron/engine/probe/plan';

const planned: PlannedConnect = {
  path: { kind: 'gateway', from: 'pod', to: '10.180.0.1:4000', proto: 'tcp', verdict: 'timeout', measured: false, note: '', family: 4 },
  fromAgent: 'a'.repeat(64),
  host: '10.180.0.1',
  port: 4000,
  expect: 'host',
  existing: false,
};

describe('connect outcomes become verdicts', () => {
  it('a connect that failed at once with a route error is unreachable, naming the errno, not a timeout', () => {
    const p = judge(planned, { kind: 'unreachable', error: 'EINVAL' }, 'n', [], undefined);
    expect(p).toMatchObject({ verdict: 'unreachable', measured: true });
    expect(p.note).toContain('EINVAL');
    expect(p.note).toContain('blackhole');
    expect(judge(planned, { kind: 'unreachable', error: 'ENETUNREACH' }, 'n', [], undefined).note).toContain('no route');
  });

  it('an unexplained connect error stays a timeout with the error named', () => {
    expect(judge(planned, { kind: 'error', error: 'closed' }, 'n', [], undefined)).toMatchObject({
      verdict: 'timeout',
      note: 'not connected: closed',
    });
  });
});
