/**
 * Stands in for the engine when it cannot be created (no privileges, a held state-dir lock, a broken conf):
 * the window still opens, `info` explains what is missing, and every other call fails with Unavailable
 * carrying the same explanation instead of the app refusing to start.
 */
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import type { EngineInfo } from '../../../shared/domain/sandbox';
import { DEFAULT_ENGINE_OPTIONS, type EngineOptions } from '../common/options';
import { type Engine } from './engine-api';

export function createUnavailableEngine(reason: unknown, overrides: Partial<EngineOptions> = {}): Engine {
  const options: EngineOptions = { ...DEFAULT_ENGINE_OPTIONS, ...overrides };
  const err = serializeError(reason);
  const problem = `the sandbox engine could not start: ${err.message}`;
  const fail = async (): Promise<never> => {
    throw new PodscopeError('Unavailable', problem, { details: err });
  };
  const info: EngineInfo = {
    version: 'unavailable',
    pid: process.pid,
    uid: process.getuid?.() ?? -1,
    stateDir: options.stateDir,
    runDir: options.runDir,
    netnsDir: options.netnsDir,
    cniConfDir: options.cniConfDir,
    cniBinDirs: options.cniBinDirs,
    cniCacheDir: options.cniCacheDir,
    ipPreference: options.ipPreference,
    maxConfNum: options.maxConfNum,
    pluginTimeoutMs: options.pluginTimeoutMs,
    problems: [problem],
  };
  return {
    options,
    subscribe: () => () => {},
    close: async () => {},
    run: fail,
    stop: fail,
    remove: fail,
    status: fail,
    list: async () => [],
    cniConfig: fail,
    preview: fail,
    live: fail,
    probe: fail,
    lastProbe: fail,
    runtimeConditions: async () => [
      { type: 'RuntimeReady', status: false, reason: 'EngineUnavailable', message: problem },
      { type: 'NetworkReady', status: false, reason: 'EngineUnavailable', message: problem },
    ],
    info: async () => info,
    createContainer: fail,
    startContainer: fail,
    stopContainer: fail,
    removeContainer: fail,
    containerStatus: fail,
    listContainers: async () => [],
    execSync: fail,
    updateContainerResources: fail,
    containerStats: fail,
    listContainerStats: async () => [],
    reopenContainerLog: fail,
  };
}
