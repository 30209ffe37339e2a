/**
 * Walks a long list in the background with a setImmediate turn every `every` items, so an RPC or IPC call that
 * arrives meanwhile waits for one batch, not for the whole walk (at 1,000 pods a liveness round held the event loop
 * for tens of milliseconds).
 */
export async function walkYielding<T>(items: Iterable<T>, fn: (item: T) => Promise<unknown>, every = 64): Promise<void> {
  let n = 0;
  for (const item of items) {
    await fn(item);
    if (++n % every === 0) await new Promise<void>((r) => setImmediate(r));
  }
}
