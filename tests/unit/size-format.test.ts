/** Sizes are shown one way everywhere (shared formatBytes: decimal SI, as rates are), the CLI's crictl-style too. */
import { describe, expect, it } from 'vitest';
import { formatBytes, formatMegabytes } from '../../shared/domain/measure';
import { humanSize } from '../../electron/cli/format';

describe('size formats', () => {
  it('formatBytes is decimal with three significant digits; the engine notes use the same function', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(186_400_000)).toBe('186 MB');
    expect(formatBytes(193_000_000)).toBe('193 MB');
    // 184 MiB is 193 MB: the same bytes print the same text wherever they are shown
    expect(formatBytes(184 * 1024 * 1024)).toBe('193 MB');
    expect(formatMegabytes).toBe(formatBytes);
  });

  it("the CLI's crictl-style sizes (images, stats) are decimal too: the same magnitude, crictl's spacing", () => {
    expect(humanSize(184 * 1024 * 1024)).toBe('192.9MB');
    expect(humanSize(193_000_000)).toBe('193MB');
  });
});
