/** CNI spec versions are plain semver triples; libcni compares them with a semver library. */

/** The newest spec version this implementation speaks (libcni's version.Current()). */
export const CURRENT_SPEC_VERSION = '1.1.0';

function parse(v: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function isValidSpecVersion(v: string): boolean {
  return parse(v) !== undefined;
}

/** Negative, zero or positive like a comparator; undefined when either side is not a version. */
export function compareSpecVersions(a: string, b: string): number | undefined {
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return undefined;
  for (let i = 0; i < 3; i++) {
    const d = pa[i]! - pb[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** a >= b; an unparseable version (e.g. a conflist without cniVersion) counts as older than everything. */
export function specAtLeast(a: string, b: string): boolean {
  const c = compareSpecVersions(a, b);
  return c !== undefined && c >= 0;
}
