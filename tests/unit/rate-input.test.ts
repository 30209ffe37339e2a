/**
 * One rate parser for every place a rate is typed: the lab's --bandwidth flag takes the same Kubernetes quantities as
 * the pod annotations and the create form (10M, 1Gi, 500k, plain numbers), plus 0 for "unshaped".
 */
import { describe, expect, it } from 'vitest';
import { parseBandwidth } from '../../electron/cli/commands/lab';
import { parseBandwidthValue, parseRateInput } from '../../shared/domain/bandwidth';
import { PodscopeError } from '../../shared/domain/errors';

describe('rates typed by a user', () => {
  it('accepts the quantities the annotations accept, with the same values', () => {
    for (const q of ['10M', '1Gi', '500k', '2000000', '1.5M', '1e6']) {
      const annotation = parseBandwidthValue(q);
      expect('bits' in annotation).toBe(true);
      expect(parseRateInput(q)).toEqual({ bitsPerSecond: Number((annotation as { bits: bigint }).bits) });
    }
    expect(parseRateInput('0')).toEqual({ bitsPerSecond: 0 });
    expect(parseRateInput('10 furlongs')).toEqual({ error: expect.stringContaining('"10 furlongs": quantities must match') });
    expect(parseRateInput('2P')).toEqual({ error: '"2P": resource is unreasonably large (> 1Pbit)' });
  });

  it('lab --bandwidth takes RATE for both directions or IN,OUT, each a quantity', () => {
    expect(parseBandwidth('5M')).toEqual({ ingressRate: 5_000_000, egressRate: 5_000_000 });
    expect(parseBandwidth('10M,1Gi')).toEqual({ ingressRate: 10_000_000, egressRate: 2 ** 30 });
    expect(parseBandwidth('1000000,0')).toEqual({ ingressRate: 1_000_000, egressRate: 0 });
    for (const bad of ['5X', '1,2,3', ',5M', '5M,']) {
      expect(() => parseBandwidth(bad)).toThrow(PodscopeError);
    }
    expect(() => parseBandwidth('5X')).toThrow(/--bandwidth "5X"/);
  });
});
