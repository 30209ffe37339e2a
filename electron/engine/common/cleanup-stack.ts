/**
 * A LIFO stack of described undo steps (CRI-O resourcestore style). Each acquired resource pushes its undo right
 * after (or, when acquiring can leak on failure, right before) acquiring it; on failure the stack unwinds in reverse
 * under a fresh timeout, because the request's own deadline may be what failed.
 */
import type { PendingCleanup } from '../../../shared/domain/sandbox';

export interface CleanupFailure {
  step: string;
  error: unknown;
  kind?: PendingCleanup['kind'];
  holds?: string[];
}

interface CleanupStep {
  description: string;
  undo: (signal: AbortSignal) => Promise<void>;
  /** what is left if this undo fails, for the sandbox's pending cleanup */
  left?: { kind: PendingCleanup['kind']; holds: string[] };
}

export class CleanupStack {
  private readonly steps: CleanupStep[] = [];

  push(description: string, undo: (signal: AbortSignal) => Promise<void>, left?: CleanupStep['left']): void {
    this.steps.push({ description, undo, left });
  }

  get size(): number {
    return this.steps.length;
  }

  /** Forget every step: the resources now belong to the caller's record. */
  release(): void {
    this.steps.length = 0;
  }

  /** Runs every undo in reverse; keeps going after a failure and returns all failures. */
  async unwind(
    timeoutMs: number,
    onStep?: (description: string, ok: boolean, error?: unknown, durationMs?: number) => void,
  ): Promise<CleanupFailure[]> {
    const signal = AbortSignal.timeout(timeoutMs);
    const failures: CleanupFailure[] = [];
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      const started = performance.now();
      try {
        await step.undo(signal);
        onStep?.(step.description, true, undefined, performance.now() - started);
      } catch (error) {
        failures.push({ step: step.description, error, ...(step.left ? { kind: step.left.kind, holds: step.left.holds } : {}) });
        onStep?.(step.description, false, error, performance.now() - started);
      }
    }
    return failures;
  }
}
