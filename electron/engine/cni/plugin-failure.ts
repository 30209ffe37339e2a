/**
 * Why a plugin exec failed, phrased as libcni's RawExec.pluginErr: a plugin reports errors as JSON
 * `{code,msg,details}` (cniVersion optional) on stdout; with no stdout the stderr text or the exit status is all
 * there is. Timeouts and cancellation are ours (libcni has only a context), so they say so plainly.
 */
import type { ExecResult } from '../os/exec';
import { formatCniError } from './names';

export interface PluginFailure {
  /** the plugin's CNI error code when it printed one */
  code?: number;
  msg: string;
  details?: string;
  /** the error as a Go caller would print it */
  text: string;
}

function failure(msg: string, code?: number, details?: string): PluginFailure {
  return { code, msg, details, text: formatCniError({ msg, details }) };
}

/** Go's exec.ExitError text. */
function exitStatus(r: ExecResult): string {
  return r.signal ? `signal: ${signalName(r.signal)}` : `exit status ${r.exitCode}`;
}

function signalName(signal: NodeJS.Signals): string {
  return signal === 'SIGKILL' ? 'killed' : signal === 'SIGTERM' ? 'terminated' : signal.toLowerCase();
}

function parseErrorJson(stdout: string): PluginFailure | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { code, msg, details } = parsed as Record<string, unknown>;
  if (code !== undefined && typeof code !== 'number') return undefined;
  if (msg !== undefined && typeof msg !== 'string') return undefined;
  if (details !== undefined && typeof details !== 'string') return undefined;
  return failure(msg ?? '', code, details || undefined);
}

export function describeFailure(r: ExecResult, timeoutMs: number): PluginFailure {
  if (r.timedOut) return failure(`netplugin timed out after ${timeoutMs} ms and was killed`);
  if (r.canceled) return failure('netplugin was canceled and killed');
  if (r.stdout.length === 0) {
    return r.stderr.length === 0
      ? failure(`netplugin failed with no error message: ${exitStatus(r)}`)
      : failure(`netplugin failed: ${JSON.stringify(r.stderr)}: ${exitStatus(r)}`);
  }
  return (
    parseErrorJson(r.stdout) ??
    failure(`netplugin failed but error parsing its diagnostic message ${JSON.stringify(r.stdout)}: not a CNI error object`)
  );
}

/** A plugin that could not even be started (Go reports fork/exec errors through the same path). */
export function describeSpawnFailure(binary: string, e: unknown): PluginFailure {
  const cause = (e as { cause?: NodeJS.ErrnoException }).cause;
  const reason = cause?.code ?? (e as Error).message;
  return failure(`netplugin failed with no error message: fork/exec ${binary}: ${reason}`);
}
