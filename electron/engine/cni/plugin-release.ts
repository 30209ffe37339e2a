/**
 * Which release of a plugin binary is installed: what the binary says about itself (`CNI <type> plugin v1.3.0`,
 * printed when it runs with no CNI_COMMAND), else the version of the Debian package that owns the file (Debian
 * builds say "version unknown"). Asked only when a known defect's text matched; each binary is asked once (again
 * after a query ran out of time).
 */
import type { ExecRequest, ProcessRunner } from '../os/exec';

const cache = new Map<string, Promise<string | undefined>>();

/** `1:1.1.1+ds1-3+b5` → `1.1.1`: the upstream part of a Debian version */
export function upstreamOfDebianVersion(v: string): string | undefined {
  return /^(?:\d+:)?(\d+\.\d+\.\d+)/.exec(v.trim())?.[1];
}

/** `CNI ptp plugin v1.3.0` → `1.3.0`; undefined for `version unknown` */
export function releaseFromAbout(text: string): string | undefined {
  return /\bplugin v?(\d+\.\d+\.\d+)\b/.exec(text)?.[1];
}

/**
 * A bound on each query, not an expected time. `dpkg-query -S` reads every installed package's file list (0.3-0.5 s
 * here on a loaded machine with a warm cache). With a 5 s bound, a CI run's cnicheck of a foreign pod took 5.6 s
 * against ~1.3 s and stopped at bridge, its known defect unrecognised: this lookup is the one step of that path with
 * such a bound, so it most likely ran out (inferred, not observed: the run kept no record of the query).
 */
const QUERY_TIMEOUT_MS = 30_000;

/** the release, and whether that answer may be kept: one that a timed-out or failed-to-start query gave may not */
async function lookUp(runner: ProcessRunner, binary: string): Promise<{ release?: string; keep: boolean }> {
  let keep = true;
  const ask = (req: Omit<ExecRequest, 'timeoutMs'>) =>
    runner.run({ ...req, timeoutMs: QUERY_TIMEOUT_MS }).then(
      (r) => {
        if (r.timedOut) keep = false;
        return r;
      },
      () => {
        keep = false;
        return undefined;
      },
    );
  const about = await ask({ file: binary, env: { PATH: process.env.PATH ?? '', CNI_COMMAND: '' }, input: '' });
  const own = about && releaseFromAbout(`${about.stdout}\n${about.stderr}`);
  if (own) return { release: own, keep: true };
  const owner = await ask({ file: 'dpkg-query', args: ['-S', binary] });
  const pkg = owner?.exitCode === 0 ? /^([^:,\s]+)[^:]*:/.exec(owner.stdout)?.[1] : undefined;
  if (!pkg) return { keep };
  const version = await ask({ file: 'dpkg-query', args: ['-W', '-f=${Version}', pkg] });
  const release = version?.exitCode === 0 ? upstreamOfDebianVersion(version.stdout) : undefined;
  return release ? { release, keep: true } : { keep };
}

/** each binary is asked once, unless the answer was cut short: then the next failure asks again */
export function pluginRelease(runner: ProcessRunner, binary: string): Promise<string | undefined> {
  const known = cache.get(binary);
  if (known) return known;
  const found: Promise<string | undefined> = lookUp(runner, binary).then((a) => {
    if (!a.keep && cache.get(binary) === found) cache.delete(binary);
    return a.release;
  });
  cache.set(binary, found);
  return found;
}
