/**
 * A runtime command as a step: its failure in the runtime's own words, and its report to the pod's trace (the
 * creation timeline's `conmon.create`, `runc.start` or `crun.start` bars). For every container, pause or app.
 */
import { PodscopeError, type ErrorCode } from '../../../shared/domain/errors';
import type { ExecResult } from '../os/exec';
import { parseRuncLog, runcErrors } from './runc-log';
import type { RuntimeStepReporter } from './types';

function errorCode(r: ExecResult): ErrorCode {
  return r.timedOut ? 'DeadlineExceeded' : r.canceled ? 'Canceled' : 'RuntimeError';
}

/** A runtime command that failed, in the runtime's own words (its error-level log lines on stderr) where it gave any. */
export function runtimeFailure(handler: string, what: string, r: ExecResult): PodscopeError {
  const messages = runcErrors(parseRuncLog(r.stderr));
  const why =
    messages.length > 0
      ? messages.join('; ')
      : r.timedOut
        ? 'timed out'
        : r.canceled
          ? 'was canceled'
          : r.signal
            ? `killed by ${r.signal}`
            : r.stderr.trim() || `exit code ${r.exitCode}`;
  return new PodscopeError(errorCode(r), `${handler} ${what} failed: ${why}`, {
    details: {
      command: r.command,
      exitCode: r.exitCode,
      signal: r.signal,
      runcErrors: messages,
      stderr: r.stderr.slice(-4000),
      timedOut: r.timedOut,
      canceled: r.canceled,
    },
  });
}

/** Runs one step and reports it, failed or not (a runtime command, conmon's create); detail is read once it ended. */
export async function reportedStep<T>(
  report: RuntimeStepReporter | undefined,
  step: string,
  label: string,
  detail: () => Record<string, unknown>,
  run: () => Promise<T>,
): Promise<T> {
  if (!report) return run();
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  let error: unknown;
  try {
    return await run();
  } catch (e) {
    error = e;
    throw e;
  } finally {
    report({
      step,
      label,
      startedAt,
      durationMs: performance.now() - t0,
      ok: error === undefined,
      ...(error !== undefined ? { error } : {}),
      detail: detail(),
    });
  }
}
