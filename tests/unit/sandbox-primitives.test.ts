import { describe, expect, it } from 'vitest';
import { CleanupStack } from '../../electron/engine/common/cleanup-stack';
import { resolveIdPrefix } from '../../electron/engine/pods/id-index';
import { generateSandboxId, makeSandboxName } from '../../electron/engine/pods/ids';
import { KeyedMutex } from '../../electron/engine/common/keyed-mutex';
import { NameRegistrar } from '../../electron/engine/common/name-registrar';
import { hasCode } from '../../shared/domain/errors';

describe('ids and names', () => {
  it('generates 64 lower-case hex ids', () => {
    expect(generateSandboxId()).toMatch(/^[0-9a-f]{64}$/);
    expect(generateSandboxId()).not.toBe(generateSandboxId());
  });

  it.each([
    [{ name: 'web', namespace: 'default', uid: 'u1', attempt: 0 }, 'web_default_u1_0'],
    [{ name: 'web', namespace: 'default', uid: 'u1', attempt: 12 }, 'web_default_u1_12'],
    [{ name: '', namespace: '', uid: '', attempt: 0 }, '___0'], // containerd allows empty parts
  ])('%o ⇒ %s', (m, name) => expect(makeSandboxName(m)).toBe(name));
});

describe('resolveIdPrefix (containerd truncindex)', () => {
  const ids = ['abc111', 'abc222', 'def333'];
  it.each([
    ['abc111', 'abc111'],
    ['abc1', 'abc111'],
    ['d', 'def333'],
    ['zzz', undefined],
  ])('%s ⇒ %s', (p, id) => expect(resolveIdPrefix(ids, p)).toBe(id));

  it('refuses an ambiguous prefix and an empty one', () => {
    expect(() => resolveIdPrefix(ids, 'abc')).toThrow(/ambiguous sandbox id prefix "abc": it matches 2/);
    expect(() => resolveIdPrefix(ids, '')).toThrow(/can't be empty/);
  });
});

describe('NameRegistrar', () => {
  it('reserves one-to-one and names the holder on a clash', () => {
    const r = new NameRegistrar();
    r.reserve('a', 'id1');
    r.reserve('a', 'id1'); // same pair again is a no-op
    let err: unknown;
    try {
      r.reserve('a', 'id2');
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'AlreadyExists')).toBe(true);
    expect((err as Error).message).toContain('is reserved for "id1"');
    r.releaseByName('a');
    r.reserve('a', 'id2');
    expect(r.holder('a')).toBe('id2');
  });
});

describe('CleanupStack', () => {
  it('unwinds in reverse, keeps going after a failure and reports it', async () => {
    const order: string[] = [];
    const s = new CleanupStack();
    s.push('one', async () => {
      order.push('one');
    });
    s.push('two', async () => {
      order.push('two');
      throw new Error('boom');
    });
    s.push('three', async () => {
      order.push('three');
    });
    const failures = await s.unwind(1000);
    expect(order).toEqual(['three', 'two', 'one']);
    expect(failures.map((f) => f.step)).toEqual(['two']);
    expect(s.size).toBe(0);
  });

  it('gives undo steps a fresh signal with its own timeout', async () => {
    const s = new CleanupStack();
    let abortedAtStart: boolean | undefined;
    // an undo that hangs until its signal fires, then fails with the signal's reason (as ProcessRunner does)
    s.push(
      'hangs',
      (signal) =>
        new Promise<void>((resolve, reject) => {
          const guard = setTimeout(() => resolve(), 10_000); // a signal that never fires lets the step pass: the test then fails below
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(guard);
              reject(signal.reason);
            },
            { once: true },
          );
        }),
    );
    s.push('first', async (signal) => {
      abortedAtStart = signal.aborted;
    });
    const failures = await s.unwind(50);
    expect(abortedAtStart).toBe(false); // fresh: not the caller's (possibly expired) deadline
    // its own timeout fired and was delivered to the hanging step, which is reported as failed with it
    expect(failures).toHaveLength(1);
    expect(failures[0]!.step).toBe('hangs');
    expect(failures[0]!.error).toMatchObject({ name: 'TimeoutError' });
  });
});

describe('KeyedMutex', () => {
  it('serialises per key and not across keys', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const slow = (k: string, tag: string, ms: number) =>
      m.run(k, async () => {
        log.push(`${tag}+`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`${tag}-`);
      });
    await Promise.all([slow('a', 'a1', 30), slow('a', 'a2', 1), slow('b', 'b1', 1)]);
    expect(log.indexOf('a1-')).toBeLessThan(log.indexOf('a2+'));
    expect(log.indexOf('b1+')).toBeLessThan(log.indexOf('a1-'));
  });
});
