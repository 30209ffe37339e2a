/** Engine flags shared by the CLI commands, and the defaults `podscope cri` changes. */
import { describe, expect, it } from 'vitest';
import { engineOptionsFromFlags } from '../../electron/core/engine-flags';
import { criEngineOptions } from '../../electron/cli/commands/cri';

describe('probe-on-ready flags', () => {
  it('leave the engine default alone unless one is given; each sets it; both together are refused by name', () => {
    expect(engineOptionsFromFlags({}).probeOnReady).toBeUndefined();
    expect(engineOptionsFromFlags({ 'probe-on-ready': true }).probeOnReady).toBe(true);
    expect(engineOptionsFromFlags({ 'no-probe-on-ready': true }).probeOnReady).toBe(false);
    expect(() => engineOptionsFromFlags({ 'probe-on-ready': true, 'no-probe-on-ready': true })).toThrow(
      '--probe-on-ready and --no-probe-on-ready contradict each other',
    );
  });

  it('podscope cri does not probe after each run unless --probe-on-ready: CRI clients have no way to read a probe report', () => {
    expect(criEngineOptions({}).probeOnReady).toBe(false);
    expect(criEngineOptions({ 'probe-on-ready': true }).probeOnReady).toBe(true);
    expect(criEngineOptions({ 'state-dir': '/tmp/x' })).toMatchObject({ probeOnReady: false, stateDir: '/tmp/x' });
  });
});
