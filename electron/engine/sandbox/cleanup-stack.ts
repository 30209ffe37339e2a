/**
 * A LIFO stack of described undo steps (CRI-O resourcestore style). Each acquired resource pushes its undo right
 * after (or, when acquiring can leak on failure, right before) acquiring it; on failure the stack unwinds in reverse
 * under a fresh timeout, because the request's own deadline may be what failed.
 */
export interface CleanupFailure {
  step: string;
  error: unknown;
}

interface CleanupStep {
  description: string;
  undo: (signal: AbortSignal) => Promise<void>;
}

export class CleanupStack {
  private readonly steps: CleanupStep[] = [];

  push(description: string, undo: (signal: AbortSignal) => Promise<void>): void {
    this.steps.push({ description, undo });
  }

  get size(): number {
    return this.steps.length;
  }

  /** Forget every step: the resources now belong to the caller's record. */
  release(): void {
    this.steps.length = 0;
  }

  /** Runs every undo in reverse; keeps going after a failure and returns all failures. */
  async unwind(timeoutMs: number, onStep?: (description: string, ok: boolean, error?: unknown, durationMs?: number) => void): Promise<CleanupFailure[]> {
    const signal = AbortSignal.timeout(timeoutMs);
    const failures: CleanupFailure[] = [];
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      const started = performance.now();
      try {
        await step.undo(signal);
        onStep?.(step.description, true, undefined, performance.now() - started);
      } catch (error) {
        failures.push({ step: step.description, error });
        onStep?.(step.description, false, error, performance.now() - started);
      }
    }
    return failures;
  }
}
