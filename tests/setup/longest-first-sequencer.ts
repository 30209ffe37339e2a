/**
 * The order files start in: the longest first, so no long file starts last and runs alone at the end while the other
 * workers sit idle (longest-processing-time-first, the usual rule for few machines and many jobs). A file's length is
 * what vitest's own cache remembers from the last run on this checkout; on a fresh clone, which has no cache, it is
 * the seconds in LONG_FILES below (measured on this project's 2-core machines), and other files follow, larger
 * first, as vitest's own sequencer would put them. The projects of one group stay one after the other (a worker that
 * keeps one module graph runs the files of one project), the one with the longest file first: the real files before
 * the short CRI files over fakes, which then fill the end.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds each file took in a quiet clean-clone run of `npm test` (2026-11-28; trace-real as it runs now, beside the
 * other real files). Only the files that take long
 * enough to matter are listed; a file missing here is merely started later. Refresh from a run's output when the
 * order stops fitting (`grep '✓ .*ms$'`).
 */
export const LONG_FILES: Record<string, number> = {
  'tests/real/plugins-leaks-real.test.ts': 93,
  'tests/real/sigkill-loop.test.ts': 70,
  'tests/real/trace-real.test.ts': 70,
  'tests/real/runtime-handlers-real.test.ts': 62,
  'tests/real/streaming-real.test.ts': 61,
  'tests/cri/fuzz-real.test.ts': 60,
  'tests/real/cli-real.test.ts': 59,
  'tests/real/unwind-real.test.ts': 57,
  'tests/real/lab-real.test.ts': 54,
  'tests/real/fault-matrix.test.ts': 44,
  'tests/real/probe-real.test.ts': 42,
  'tests/real/sandbox-real.test.ts': 40,
  'tests/real/critest-semantics.test.ts': 39,
  'tests/real/lab-gc-probe.test.ts': 38,
  'tests/real/topology-real.test.ts': 37,
  'tests/real/foreign-containerd.test.ts': 37,
  'tests/real/lab-state-real.test.ts': 36,
  'tests/real/nodes-probe-across.test.ts': 35,
  'tests/real/critest-env-signal.test.ts': 35,
  'tests/real/measure-real.test.ts': 34,
  'tests/real/containers-cri.test.ts': 32,
  'tests/real/probe-multinet-real.test.ts': 29,
  'tests/real/probe-dns-mtu-real.test.ts': 29,
  'tests/real/containers-real.test.ts': 23,
  'tests/real/runtime-real.test.ts': 20,
  'tests/real/cli-images.test.ts': 20,
  'tests/cri/fuzz.test.ts': 18,
  'tests/real/production-install.test.ts': 16,
  'tests/real/containers-cli-local.test.ts': 16,
  'tests/cri/list-follower.test.ts': 12,
  'tests/cri/client.test.ts': 11,
  'tests/real/bench-smoke.test.ts': 11,
};

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification): number | undefined => {
      const path = relative(root, f.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${path}`);
      return cached ? cached.duration / 1000 : LONG_FILES[path];
    };
    const size = (f: TestSpecification) => this.ctx.cache.getFileStats(`${f.project.name}:${relative(root, f.moduleId)}`)?.size ?? 0;
    const longestOf = new Map<string, number>();
    for (const f of files) longestOf.set(f.project.name, Math.max(longestOf.get(f.project.name) ?? 0, seconds(f) ?? 0));
    return [...files].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      if (a.project.name !== b.project.name)
        return longestOf.get(b.project.name)! - longestOf.get(a.project.name)! || (a.project.name < b.project.name ? -1 : 1);
      const [sa, sb] = [seconds(a), seconds(b)];
      if (sa !== undefined || sb !== undefined) return (sb ?? 0) - (sa ?? 0);
      return size(b) - size(a);
    });
  }
}
