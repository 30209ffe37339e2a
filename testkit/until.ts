/**
 * One way for a test to wait for something to become true: poll a condition until it holds or a bound passes, then
 * fail naming what was awaited (and the last value or error seen). A test that sleeps "long enough" is slow on a quiet
 * machine and flaky on a busy one; a test that waits on the condition is neither. The bound is a failure bound, never
 * an assertion on speed: it only says when to stop waiting and report.
 *
 * A sleep that IS the behaviour under test (letting a rate settle, proving that nothing happens for a while) is not a
 * wait for a condition; those stay sleeps with a comment saying why (see `settle`).
 */

export interface UntilOptions {
  /** what is awaited, in words: it names the failure ("gave up waiting for <what> after 10000 ms") */
  what: string;
  /** failure bound in ms (default 10 s) */
  timeout?: number;
  /** ms between two looks (default 25) */
  interval?: number;
}

/**
 * Polls `cond` until it returns a value other than undefined, null or false (that value is returned), or the bound
 * passes. A `cond` that throws counts as not yet; its last error is in the failure message.
 */
export async function until<T>(cond: () => T | Promise<T>, opts: UntilOptions): Promise<Exclude<T, undefined | null | false>> {
  const timeout = opts.timeout ?? 10_000;
  const interval = opts.interval ?? 25;
  const deadline = Date.now() + timeout;
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      last = await cond();
      lastError = undefined;
      if (last !== undefined && last !== null && last !== false) return last as Exclude<T, undefined | null | false>;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const seen =
        lastError !== undefined ? `; last error: ${(lastError as Error).message ?? String(lastError)}` : `; last value: ${String(last)}`;
      throw new Error(`gave up waiting for ${opts.what} after ${timeout} ms${seen}`);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(interval, deadline - Date.now()))));
  }
}

/**
 * A deliberate pause that is part of what the test checks (e.g. "no event arrives within this time", "let the rate
 * settle"): the reason is required so the call site says why it is not a wait on a condition.
 */
export function settle(ms: number, why: string): Promise<void> {
  void why;
  return new Promise((r) => setTimeout(r, ms));
}

/** `text` with every regular-expression metacharacter escaped, for building a RegExp from a leased name or address */
export function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
