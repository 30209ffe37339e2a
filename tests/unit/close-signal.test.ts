/**
 * A measurer's close signal carries one listener per exec in flight: a probe across nodes has more than ten at once,
 * and that must not print Node's leak warning (the CLI showed "MaxListenersExceededWarning" on `probe --all-nodes`).
 */
import { describe, expect, it } from 'vitest';
import { closeController } from '../../electron/engine/common/close-signal';

describe('closeController', () => {
  it('takes many listeners at once without the MaxListenersExceededWarning, and still aborts each of them', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const c = closeController();
      let aborted = 0;
      for (let i = 0; i < 40; i++) c.signal.addEventListener('abort', () => aborted++, { once: true });
      // a plain controller with as many warns: the check above can fail
      const plain = new AbortController();
      for (let i = 0; i < 12; i++) plain.signal.addEventListener('abort', () => {});
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w === 'MaxListenersExceededWarning')).toHaveLength(1);
      c.abort();
      expect(aborted).toBe(40);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
