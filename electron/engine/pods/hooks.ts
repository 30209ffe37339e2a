/** Glue from the CNI and runtime layers' step reports to the sandbox trace. */
import type { CniHooks } from '../cni/types';
import type { RuntimeStepReporter } from '../runtime/types';
import type { PodsContext } from './context';
import type { StepRecorder } from '../common/steps';

export function cniHooks(ctx: PodsContext, trace: StepRecorder, signal?: AbortSignal): CniHooks {
  return {
    signal,
    pluginTimeoutMs: ctx.options.pluginTimeoutMs,
    record: (r) => trace.add(r),
  };
}

export function runtimeReporter(trace: StepRecorder): RuntimeStepReporter {
  return (s) => trace.add(s);
}
