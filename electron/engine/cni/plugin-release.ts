/**
 * Which release of a plugin binary is installed: what the binary says about itself (`CNI <type> plugin v1.3.0`,
 * printed when it runs with no CNI_COMMAND), else the version of the Debian package that owns the file (Debian
 * builds say "version unknown"). Asked only when a known defect's text matched; each binary is asked once.
 */
import type { ProcessRunner } from '../os/exec';

const cache = new Map<string, Promise<string | undefined>>();

/** `1:1.1.1+ds1-3+b5` → `1.1.1`: the upstream part of a Debian version */
export function upstreamOfDebianVersion(v: string): string | undefined {
  return /^(?:\d+:)?(\d+\.\d+\.\d+)/.exec(v.trim())?.[1];
}

/** `CNI ptp plugin v1.3.0` → `1.3.0`; undefined for `version unknown` */
export function releaseFromAbout(text: string): string | undefined {
  return /\bplugin v?(\d+\.\d+\.\d+)\b/.exec(text)?.[1];
}

async function lookUp(runner: ProcessRunner, binary: string): Promise<string | undefined> {
  const quiet = { timeoutMs: 5_000 };
  const about = await runner
    .run({ file: binary, env: { PATH: process.env.PATH ?? '', CNI_COMMAND: '' }, input: '', ...quiet })
    .catch(() => undefined);
  const own = about && releaseFromAbout(`${about.stdout}\n${about.stderr}`);
  if (own) return own;
  const owner = await runner.run({ file: 'dpkg-query', args: ['-S', binary], ...quiet }).catch(() => undefined);
  const pkg = owner?.exitCode === 0 ? /^([^:,\s]+)[^:]*:/.exec(owner.stdout)?.[1] : undefined;
  if (!pkg) return undefined;
  const version = await runner.run({ file: 'dpkg-query', args: ['-W', '-f=${Version}', pkg], ...quiet }).catch(() => undefined);
  return version?.exitCode === 0 ? upstreamOfDebianVersion(version.stdout) : undefined;
}

export function pluginRelease(runner: ProcessRunner, binary: string): Promise<string | undefined> {
  let found = cache.get(binary);
  if (!found) {
    found = lookUp(runner, binary);
    cache.set(binary, found);
  }
  return found;
}
