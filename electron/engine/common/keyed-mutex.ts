/** Serialises operations per key (one sandbox id): CNI forbids parallel operations on one attachment. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs fn under the key's lock only if nobody holds it now; otherwise skips and returns undefined. */
  async tryRun<T>(key: string, fn: () => Promise<T>): Promise<T | undefined> {
    return this.tails.has(key) ? undefined : this.run(key, fn);
  }

  /** whether an operation holds (or waits for) the key now */
  isHeld(key: string): boolean {
    return this.tails.has(key);
  }

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => current);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
