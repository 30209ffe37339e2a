/**
 * What a ProcessRunner returns, for tests that answer a command themselves: a process that ran to its end and exited
 * 0 unless `over` says otherwise (a code, a signal, a timeout, a cancel, its output).
 */
import type { ExecResult } from '../electron/engine/os/exec';

export function execResult(over: Partial<ExecResult> = {}): ExecResult {
  return {
    command: 'x',
    exitCode: 0,
    signal: null,
    stdout: '',
    stderr: '',
    durationMs: 1,
    timedOut: false,
    canceled: false,
    ...over,
  };
}

/** a process that exited 1 (a CNI plugin's usual failure) unless `over` says otherwise */
export function failedExec(over: Partial<ExecResult> = {}): ExecResult {
  return execResult({ exitCode: 1, ...over });
}
