/**
 * The wrapper crun runs in on a hybrid cgroup host (runtime/oci-runtime.ts): with busybox's shell and with the
 * system's, the program sees a tmpfs where the host has its cgroup2, gets its arguments unchanged, and the host's
 * mount table is the same afterwards. Needs root and util-linux unshare; creates no file or mount that outlives it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cgroup2HidingWrapper, hidingShell } from '../../electron/engine/runtime/oci-runtime';

const UNIFIED = '/sys/fs/cgroup/unified';
const hybrid = readFileSync('/proc/self/mounts', 'utf8')
  .split('\n')
  .some((l) => l.split(' ')[1] === UNIFIED);
const unifiedMount = () =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.split(' ')[4] === UNIFIED);

describe.skipIf(!hybrid)('the cgroup2-hiding wrapper', async () => {
  const shells: Array<[string, string[]]> = [['the system sh', ['sh']]];
  const busybox = await hidingShell();
  if (busybox[0] !== 'sh') shells.push(["busybox's sh", busybox]);
  it.each(shells)('with %s: the program sees a tmpfs over the cgroup2 and its own arguments; the host keeps its mount', (_, shell) => {
    const before = unifiedMount();
    // the program prints the file system type it sees there, then each argument on a line of its own
    const out = execFileSync(
      cgroup2HidingWrapper(shell, false)[0]!,
      [
        ...cgroup2HidingWrapper(shell, false).slice(1),
        'sh',
        '-c',
        `stat -f -c %T ${UNIFIED}; printf '%s\\n' "$@"`,
        'prog',
        'a b',
        '$HOME',
        '',
      ],
      { encoding: 'utf8' },
    );
    expect(out.split('\n')).toEqual(['tmpfs', 'a b', '$HOME', '', '']);
    expect(unifiedMount()).toEqual(before);
    expect(execFileSync('stat', ['-f', '-c', '%T', UNIFIED], { encoding: 'utf8' }).trim()).toBe('cgroup2fs');
  });
});
