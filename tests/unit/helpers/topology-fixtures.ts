/**
 * What the topology tests build from: kernel output recorded on a Debian 12 host (tests/fixtures/kernel/topology) and
 * the plugin ADDs of a run as the engine records them in its trace.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceEntry } from '../../../shared/domain/trace';

/** one recorded kernel output file, as text */
export function topologyFixture(name: string): string {
  return readFileSync(join(__dirname, '../../fixtures/kernel/topology', name), 'utf8');
}

/** one successful plugin ADD of the run (its config and the interfaces its result lists), as the engine records it */
export function pluginAdd(network: string, index: number, type: string, config: object, interfaces: object[]): TraceEntry {
  return {
    seq: 0,
    phase: 'run',
    step: 'cni.plugin',
    label: `ADD ${type}`,
    startedAt: '2026-11-25T23:00:00.000Z',
    durationMs: 1,
    ok: true,
    plugin: {
      network,
      ifName: 'eth0',
      type,
      verb: 'ADD',
      index,
      env: {},
      stdin: JSON.stringify({ cniVersion: '1.0.0', name: network, type, ...config }),
      stdout: JSON.stringify({ cniVersion: '1.0.0', interfaces }),
      stderr: '',
      exitCode: 0,
    },
  };
}
