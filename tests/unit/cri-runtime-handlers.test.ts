import { describe, expect, it } from 'vitest';
import { criRuntimeHandlers } from '../../electron/cri/server/runtime-status';
import type { RuntimeHandlerInfo } from '../../shared/domain/sandbox';

const runc: RuntimeHandlerInfo = { name: 'runc', path: '/usr/sbin/runc', present: true, version: 'runc version 1.1.5', default: true };
const crun: RuntimeHandlerInfo = { name: 'crun', path: '/usr/bin/crun', present: true, version: 'crun version 1.8.1', default: false };
const off = { recursiveReadOnlyMounts: false, userNamespaces: false };

describe('CRI Status runtime_handlers', () => {
  it('lists the default once more under the empty name, as containerd does for its default runtime', () => {
    expect(criRuntimeHandlers([runc, crun])).toEqual([
      { name: '', features: off },
      { name: 'runc', features: off },
      { name: 'crun', features: off },
    ]);
  });

  it('leaves out a handler whose binary is missing: RunPodSandbox would refuse it', () => {
    const missing = { ...crun, present: false, version: undefined, problem: 'install crun (Debian package crun)' };
    expect(criRuntimeHandlers([runc, missing]).map((h) => h.name)).toEqual(['', 'runc']);
  });

  it('offers neither recursive read-only mounts nor user namespaces, which the spec builder never sets', () => {
    for (const h of criRuntimeHandlers([runc, crun])) expect(h.features).toEqual(off);
  });
});
