/** Glue from the CNI and runtime layers' step reports to the sandbox trace. */
import type { CniHooks } from '../cni/types';
import type { RuntimeStepReporter } from '../runtime/types';
import type { EngineContext } from './context';
import type { TraceRecorder } from '../common/steps';

export function cniHooks(ctx: EngineContext, trace: TraceRecorder, signal?: AbortSignal): CniHooks {
  return {
    signal,
    pluginTimeoutMs: ctx.options.pluginTimeoutMs,
    record: (r) => trace.add(r),
  };
}

export function runtimeReporter(trace: TraceRecorder): RuntimeStepReporter {
  return (s) => trace.add(s);
}
