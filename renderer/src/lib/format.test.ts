import { describe, expect, it } from 'vitest';
import { bitRate, byteRateAsBits, byteSize } from './format';

describe('one unit display', () => {
  it('shows rates in bit/s with SI prefixes, whatever unit they were read in', () => {
    expect(bitRate(10_000_000)).toBe('10 Mbit/s');
    expect(bitRate(1_048_576)).toBe('1.048 Mbit/s');
    expect(bitRate(999)).toBe('999 bit/s');
    expect(bitRate(undefined)).toBeUndefined();
    // tc's JSON gives a tbf rate in bytes per second: 1 250 000 B/s is the 10 Mbit/s the annotation asked for
    expect(byteRateAsBits(1_250_000)).toBe('10 Mbit/s');
  });

  it('shows sizes in bytes with SI prefixes', () => {
    expect(byteSize(512)).toBe('512 B');
    expect(byteSize(12_500)).toBe('12.5 kB');
    expect(byteSize(193_000_000)).toBe('193 MB');
    expect(byteSize(5 * 1024 * 1024)).toBe('5.24 MB');
    expect(byteSize(4_294_967_295)).toBe('4.29 GB');
  });
});
