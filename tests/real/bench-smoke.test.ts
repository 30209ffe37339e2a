/**
 * Smoke test of the scale bench (bench/cri-scale.ts) at 5 pods: it runs against `podscope cri` and a containerd of
 * its own, prints its tables and tears everything down. Only that is asserted — never a timing (figures are for
 * the bench's reader). Root only (netns, runc, containerd).
 */
import { existsSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCriScale } from '../../bench/cri-scale';

const isRoot = process.getuid?.() === 0;
const hasContainerd = existsSync('/usr/bin/containerd');
const linkExists = (name: string) => {
  try {
    execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!isRoot || !hasContainerd)('scale bench smoke', () => {
  it('runs Status and List at 5 pods on both runtimes, prints every op and leaves no pod, dir or bridge behind', async () => {
    const before = new Set(readdirSync('/tmp').filter((f) => f.startsWith('podscope-p1-scale-')));
    const lines: string[] = [];
    const r = await runCriScale({ sizes: [5], samples: 3, out: (l) => lines.push(l) });
    const text = lines.join('\n');
    for (const op of ['Status', 'Status verbose', 'List', 'List id=', 'List label='])
      expect(text).toMatch(new RegExp(`^${op}\\s+\\d`, 'm'));
    expect(text).toContain('RSS at 5 pods');
    expect(r.leftover).toEqual({ podscope: 0, containerd: 0 });
    expect(text).toMatch(/teardown podscope: stop\+remove of 5 pods .*; 0 left/);
    expect(text).toMatch(/teardown containerd: stop\+remove of 5 pods .*; 0 left/);
    expect(readdirSync('/tmp').filter((f) => f.startsWith('podscope-p1-scale-') && !before.has(f))).toEqual([]);
    expect(linkExists('psp1-scale')).toBe(false);
    expect(linkExists('psp1-sctd')).toBe(false);
  }, 300_000);
});
