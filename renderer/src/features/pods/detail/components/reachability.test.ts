import { describe, expect, it } from 'vitest';
import type { ProbePath } from '../../../../../../shared/domain/probe';
import { verdictTone } from '../model/reachability';

const path = (over: Partial<ProbePath>): ProbePath => ({
  kind: 'hostPort',
  from: 'host',
  to: '127.0.0.1:80',
  proto: 'tcp',
  verdict: 'reachable',
  measured: true,
  note: '',
  ...over,
});

describe('reachability verdict pills', () => {
  it('green only for a path measured reachable while the pod is ready', () => {
    expect(verdictTone(path({}), true)).toBe('ok');
    expect(verdictTone(path({ measured: false }), true)).toBe('muted');
    // a report from before the pod stopped is never green
    expect(verdictTone(path({}), false)).toBe('muted');
    expect(verdictTone(path({ verdict: 'shadowed' }), true)).toBe('warn');
    expect(verdictTone(path({ verdict: 'refused' }), true)).toBe('bad');
    expect(verdictTone(path({ verdict: 'timeout' }), true)).toBe('bad');
    // a route error is a failure too, never green
    expect(verdictTone(path({ verdict: 'unreachable' }), true)).toBe('bad');
  });

  it('an isolated path (forbidden by the plugin design) has its own colour: never green, never red', () => {
    expect(verdictTone(path({ verdict: 'isolated' }), true)).toBe('info');
    expect(verdictTone(path({ verdict: 'isolated' }), false)).toBe('muted');
  });
});
