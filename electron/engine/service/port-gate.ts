/**
 * Who may bind a pod's container ports right now. The reachability probe puts a responder on a container port inside
 * the pod when nothing listens there (docs/semantics.md#reachability-probe); a container starting meanwhile would find
 * its port taken and exit. So probes are exclusive and container starts are shared: starts run side by side, a probe
 * waits for the starts in flight to finish, and a start that arrives while a probe waits or runs waits for it.
 * Writer-preferring so a steady stream of starts cannot starve a probe the user asked for.
 */
export class PortGate {
  private shared = 0;
  private exclusive: Promise<void> | undefined;
  private drained: (() => void) | undefined;
  /** probes queue behind each other: one responder set at a time */
  private exclusiveTail: Promise<unknown> = Promise.resolve();

  /** a container start: waits for a probe that holds or awaits the gate, then runs beside other starts */
  async withShared<T>(fn: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    this.shared++;
    try {
      return await fn();
    } finally {
      this.shared--;
      if (this.shared === 0) this.drained?.();
    }
  }

  /** a probe: after the probes queued before it, blocks new starts, waits for starts in flight, then runs alone */
  withExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const turn = this.exclusiveTail
      .catch(() => undefined)
      .then(async () => {
        let open!: () => void;
        this.exclusive = new Promise<void>((r) => (open = r));
        try {
          if (this.shared > 0) await new Promise<void>((r) => (this.drained = r));
          this.drained = undefined;
          return await fn();
        } finally {
          this.exclusive = undefined;
          open();
        }
      });
    this.exclusiveTail = turn;
    return turn;
  }

  /** resolves once every probe queued so far has finished (engine close) */
  async idle(): Promise<void> {
    await this.exclusiveTail.catch(() => undefined);
  }
}
