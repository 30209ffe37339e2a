/** Reading /proc/self/mountinfo: the kernel's own answer to "is this path a mount, and of what". */
import { readFile } from 'node:fs/promises';

export interface MountEntry {
  mountPoint: string;
  fsType: string;
  /** e.g. `shared:1`, `master:2`; empty for a private mount */
  optionalFields: string[];
}

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`). */
function unescapeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    const sep = fields.indexOf('-', 6);
    const mountPoint = fields[4];
    const fsType = fields[sep + 1];
    if (sep < 0 || mountPoint === undefined || fsType === undefined) continue;
    entries.push({ mountPoint: unescapeOctal(mountPoint), fsType, optionalFields: fields.slice(6, sep) });
  }
  return entries;
}

export async function readMountInfo(file = '/proc/self/mountinfo'): Promise<MountEntry[]> {
  return parseMountInfo(await readFile(file, 'utf8'));
}

/**
 * The mount a (real, resolved) path lives on: the longest mount point that is the path or one of its parents; the
 * last listed one when several share it (the topmost). What containerd's mount lookup answers for a host path.
 */
export function mountContaining(entries: MountEntry[], realPath: string): MountEntry | undefined {
  let found: MountEntry | undefined;
  for (const e of entries) {
    const inside = e.mountPoint === '/' || realPath === e.mountPoint || realPath.startsWith(`${e.mountPoint}/`);
    if (inside && (!found || e.mountPoint.length >= found.mountPoint.length)) found = e;
  }
  return found;
}

/** shared (a peer group), slave (receives from a master) or private, from a mount's optional fields. */
export function propagationOf(e: MountEntry): 'shared' | 'slave' | 'private' {
  if (e.optionalFields.some((f) => f.startsWith('shared:'))) return 'shared';
  if (e.optionalFields.some((f) => f.startsWith('master:'))) return 'slave';
  return 'private';
}

/** The topmost (last listed) mount on a path, which is the one a lookup of that path sees. */
export function mountAt(entries: MountEntry[], realPath: string): MountEntry | undefined {
  let found: MountEntry | undefined;
  for (const e of entries) if (e.mountPoint === realPath) found = e;
  return found;
}

/** the mountinfo spelling of a path (the octal escapes the kernel writes) */
function escapeOctal(path: string): string {
  return path.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * mountAt over the raw text, parsing only the lines that mention the path: what a stop asks (is this netns or
 * /dev/shm still mounted?) costs one scan of the text instead of an object per mount, which matters at 1,000 pods
 * (two mounts each) and several questions per stop. Same answer as mountAt(parseMountInfo(text), realPath).
 */
export function findMount(text: string, realPath: string): MountEntry | undefined {
  const needle = ` ${escapeOctal(realPath)} `;
  let found: MountEntry | undefined;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
    const start = text.lastIndexOf('\n', i) + 1;
    const end = text.indexOf('\n', i);
    // the path may also be another line's root field: only a line whose mount point it is counts
    const [entry] = parseMountInfo(text.slice(start, end < 0 ? undefined : end));
    if (entry?.mountPoint === realPath) found = entry;
  }
  return found;
}

/** the topmost mount on realPath now, or undefined (one read of mountinfo, no full parse) */
export async function readMountAt(realPath: string, file = '/proc/self/mountinfo'): Promise<MountEntry | undefined> {
  return findMount(await readFile(file, 'utf8'), realPath);
}
