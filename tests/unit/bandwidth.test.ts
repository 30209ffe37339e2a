import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  analyzeBandwidth,
  formatBitsPerSecond,
  parseBandwidthValue,
  parseQuantity,
  QUANTITY_REGEX_TEXT,
  splitQuantity,
} from '../../shared/domain/bandwidth';

// Kubernetes quantity grammar (apimachinery) as containerd reads bandwidth annotations: bits per second, rounded up.
describe('parseQuantity', () => {
  it.each([
    ['10M', 10_000_000n],
    ['1Mi', 1_048_576n],
    ['1k', 1000n],
    ['1Ki', 1024n],
    ['1000m', 1n], // m is milli, not mega
    ['999.1', 1000n], // Value() rounds up
    ['1.5k', 1500n],
    ['.5k', 500n],
    ['1.', 1n],
    ['1E3', 1000n], // exponent form
    ['1E', 10n ** 18n], // bare E is exa
    ['1Pi', 2n ** 50n],
    ['1000T', 10n ** 15n],
    ['+2G', 2_000_000_000n],
    ['-1', -1n],
  ])('%s = %s', (text, value) => {
    expect(parseQuantity(text)).toBe(value);
  });

  it.each([
    ['10X', /must match the regular expression/],
    ['10 M', /must match the regular expression/],
    ['1K', /unable to parse quantity's suffix/], // upper-case K is not a suffix
    ['1e', /unable to parse quantity's suffix/],
    ['1.2.3', /must match the regular expression/],
    ['', /must match the regular expression/],
  ])('%s is rejected', (text, message) => {
    expect(() => parseQuantity(text)).toThrow(message);
  });
});

// containerd validateBandwidthIsReasonable: [1k, 1P] after rounding up.
describe('parseBandwidthValue limits', () => {
  it.each([
    ['1k', { bits: 1000n }],
    ['999.1', { bits: 1000n }],
    ['1P', { bits: 10n ** 15n }],
    ['1000T', { bits: 10n ** 15n }],
    ['999', { error: 'resource is unreasonably small (< 1kbit)' }],
    ['0', { error: 'resource is unreasonably small (< 1kbit)' }],
    ['-1', { error: 'resource is unreasonably small (< 1kbit)' }],
    ['1Pi', { error: 'resource is unreasonably large (> 1Pbit)' }],
    ['1E', { error: 'resource is unreasonably large (> 1Pbit)' }],
    ['99999999999999999999999999', { error: 'resource is unreasonably large (> 1Pbit)' }], // beyond int64: compared exactly
    ['.', { error: 'resource is unreasonably small (< 1kbit)' }], // apimachinery reads a bare dot or sign as 0
    ['-', { error: 'resource is unreasonably small (< 1kbit)' }],
    ['1e999999999', { error: 'resource is unreasonably large (> 1Pbit)' }],
    ['1e-999999999', { error: 'resource is unreasonably small (< 1kbit)' }],
  ])('%s ⇒ %o', (text, expected) => {
    expect(parseBandwidthValue(text)).toEqual(expected);
  });
});

describe('analyzeBandwidth', () => {
  it('builds the capability with containerd burst for each present direction, 0 for an absent one', () => {
    const a = analyzeBandwidth({ 'kubernetes.io/ingress-bandwidth': '10M' });
    expect(a.capability).toEqual({ ingressRate: 10_000_000, ingressBurst: 4294967295, egressRate: 0, egressBurst: 0 });
    expect(a.ingress?.human).toBe('10 Mbit/s');
    expect(a.error).toBeUndefined();
  });

  it('gives no capability when no annotation is present', () => {
    expect(analyzeBandwidth({ other: 'x' })).toEqual({});
  });

  it('names the annotation and the value in the error and gives no capability', () => {
    const a = analyzeBandwidth({ 'kubernetes.io/ingress-bandwidth': '1M', 'kubernetes.io/egress-bandwidth': '10X' });
    expect(a.capability).toBeUndefined();
    expect(a.error).toBe(
      `kubernetes.io/egress-bandwidth "10X": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
    expect(a.ingress?.bitsPerSecond).toBe('1000000');
  });
});

describe('formatBitsPerSecond', () => {
  it.each([
    [999n, '999 bit/s'],
    [1000n, '1 kbit/s'],
    [1_048_576n, '1.048 Mbit/s'],
    [10n ** 15n, '1 Pbit/s'],
  ])('%s ⇒ %s', (bits, text) => expect(formatBitsPerSecond(bits)).toBe(text));
});

// The grammar is matched without a backtracking RegExp: as a JS RegExp it is quadratic on failing inputs ("111…1x"),
// and a 110 KiB annotation held the CRI daemon's event loop for seconds (Go's RE2 is linear). Same answers as the
// RegExp on every input.
describe('splitQuantity', () => {
  const RE = new RegExp(QUANTITY_REGEX_TEXT);
  it('agrees with the grammar RegExp on arbitrary short strings of the grammar alphabet', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789.+-eEinumkKMGTPx '.split('')), maxLength: 12 }), (s) => {
        const m = RE.exec(s);
        expect(splitQuantity(s)).toEqual(m ? [m[1], m[2]] : undefined);
      }),
      { numRuns: 5000 },
    );
  });

  it('answers a 1 MiB run of digits with a bad suffix (a format error), like a short one', () => {
    expect(parseBandwidthValue(`${'1'.repeat(1 << 20)}x`)).toEqual(parseBandwidthValue('11x'));
  });
});
