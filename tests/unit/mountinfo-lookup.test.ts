/**
 * findMount (one scan of mountinfo's text for one path, used at every stop) gives exactly what the full parse and
 * mountAt give: the topmost mount on the path, paths with escaped spaces/backslashes, and never a line where the
 * path is only the root field (a bind mount's source).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { findMount, mountAt, parseMountInfo } from '../../electron/engine/netns/mountinfo';

const esc = (p: string) => p.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
const line = (id: number, root: string, mountPoint: string, fsType: string, optional = '') =>
  `${id} 25 0:${id} ${esc(root)} ${esc(mountPoint)} rw,relatime ${optional ? `${optional} ` : ''}- ${fsType} ${fsType} rw`;

describe('findMount', () => {
  it('finds the topmost mount, unescapes, and ignores lines where the path is only the root', () => {
    const text = [
      line(1, '/', '/', 'ext4', 'shared:1'),
      line(2, '/run/ns dir/cni-1', '/elsewhere', 'nsfs'),
      line(3, 'net:[4026531992]', '/run/ns dir/cni-1', 'nsfs', 'shared:5'),
      line(4, '/', '/run/ns dir/cni-1', 'tmpfs'),
      '',
    ].join('\n');
    expect(findMount(text, '/run/ns dir/cni-1')).toEqual({ mountPoint: '/run/ns dir/cni-1', fsType: 'tmpfs', optionalFields: [] });
    expect(findMount(text, '/elsewhere')?.fsType).toBe('nsfs');
    expect(findMount(text, '/run/ns')).toBeUndefined();
  });

  it('agrees with the full parse on generated tables', () => {
    const seg = fc.constantFrom('a', 'b', 'ns', 'x y', 'back\\slash', 'cni-1');
    const path = fc.array(seg, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join('/')}`);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(path, path, fc.constantFrom('nsfs', 'tmpfs', 'ext4'), fc.constantFrom('', 'shared:3', 'master:2')), {
          maxLength: 12,
        }),
        path,
        (rows, probe) => {
          const text = rows.map(([root, mp, fs, opt], i) => line(i + 10, root, mp, fs, opt)).join('\n');
          expect(findMount(text, probe)).toEqual(mountAt(parseMountInfo(text), probe));
        },
      ),
      { numRuns: 300 },
    );
  });
});
