/**
 * The runtime's own status (CRI Status: RuntimeReady, NetworkReady) and the engine info the app's engine page and
 * `podscope info` show: its dirs and settings, and every problem it knows of.
 */
import { serializeError } from '../../../shared/domain/errors';
import { hostLocalDirs } from '../../../shared/domain/cni';
import type { EngineInfo, RuntimeCondition } from '../../../shared/domain/sandbox';
import { conflistSuffix } from '../cni/cni-error';
import type { PodsContext } from '../pods/context';
import type { RecoveryReport } from '../pods/recover';

export const ENGINE_VERSION = '0.1.0';

export async function runtimeConditions(ctx: PodsContext, problems: string[]): Promise<RuntimeCondition[]> {
  const runtimeProblems = problems.filter((p) => p.startsWith('runtime:'));
  const conditions: RuntimeCondition[] = [
    runtimeProblems.length === 0
      ? { type: 'RuntimeReady', status: true, reason: '', message: '' }
      : { type: 'RuntimeReady', status: false, reason: 'RuntimeNotReady', message: runtimeProblems.join('; ') },
  ];
  try {
    await ctx.cni.status();
    conditions.push({ type: 'NetworkReady', status: true, reason: '', message: '' });
  } catch (e) {
    conditions.push({
      type: 'NetworkReady',
      status: false,
      reason: 'NetworkPluginNotReady',
      message: `Network plugin returns error: ${serializeError(e).message}${conflistSuffix(e)}`,
    });
  }
  return conditions;
}

export function engineInfo(
  ctx: PodsContext,
  known: { problems: string[]; recovery: RecoveryReport; forcedLeftovers: string[] },
): EngineInfo {
  const o = ctx.options;
  const cni = ctx.cni.config();
  return {
    version: ENGINE_VERSION,
    pid: process.pid,
    uid: process.getuid?.() ?? -1,
    stateDir: o.stateDir,
    runDir: o.runDir,
    netnsDir: o.netnsDir,
    cniConfDir: o.cniConfDir,
    cniBinDirs: o.cniBinDirs,
    cniCacheDir: o.cniCacheDir,
    ipPreference: o.ipPreference,
    maxConfNum: o.maxConfNum,
    pluginTimeoutMs: o.pluginTimeoutMs,
    problems: [
      ...known.problems.map((p) => p.replace(/^runtime: /, '')),
      ...(cni.ready ? [] : [`CNI: ${cni.notReadyReason ?? 'not ready'}`]),
      ...known.recovery.problems,
      ...known.forcedLeftovers,
    ],
    ...(ctx.owner.stateDirId ? { stateDirId: ctx.owner.stateDirId } : {}),
    readOnly: ctx.readOnly,
    startupGc: known.recovery.startupGc,
    ...(ctx.runtimeHandlers ? { runtimeHandlers: ctx.runtimeHandlers } : {}),
    hostLocalDirs: hostLocalDirs(cni.networks),
  };
}
