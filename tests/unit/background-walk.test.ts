/**
 * The background liveness and exit polls walk every pod and container: they let other work run between batches
 * (walkYielding) and take the exact look only on some rounds (everyNth). Both as plain functions.
 */
import { describe, expect, it } from 'vitest';
import { everyNth } from '../../electron/engine/service/watchers';
import { walkYielding } from '../../electron/engine/common/walk';

describe('walkYielding', () => {
  it('visits every item in order, and work queued meanwhile runs after each batch, not after the whole walk', async () => {
    const seen: string[] = [];
    const items = Array.from({ length: 10 }, (_, i) => i);
    // queued before the walk starts: it runs at the first turn of the event loop the walk gives
    setImmediate(() => seen.push('other'));
    await walkYielding(items, async (i) => void seen.push(String(i)), 4);
    expect(seen).toEqual(['0', '1', '2', '3', 'other', '4', '5', '6', '7', '8', '9']);
  });

  it('an item whose work fails stops the walk with that error', async () => {
    await expect(
      walkYielding([1, 2, 3], async (i) => {
        if (i === 2) throw new Error('item 2');
      }),
    ).rejects.toThrow('item 2');
  });
});

describe('everyNth', () => {
  it('is true on the first round and on every n-th after it', () => {
    const exact = everyNth(3);
    expect(Array.from({ length: 7 }, () => exact())).toEqual([true, false, false, true, false, false, true]);
  });
});
