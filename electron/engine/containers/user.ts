/**
 * The container's uid/gid/groups, as containerd resolves them (internal/cri/server/container_create_linux.go
 * containerSpecOpts, pkg/oci WithUser / WithAdditionalGIDs): run_as_username, else run_as_user, else the image's
 * USER, else root; a name (or a uid with an entry) takes its primary group from the image's /etc/passwd;
 * run_as_group overrides it; groups listing the user in /etc/group and supplemental_groups are added.
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerConfig } from '../../../shared/domain/container';
import { invalidArgument } from '../../../shared/domain/errors';
import type { ImageRuntimeConfig } from '../runtime/oci-types';
import type { ResolvedUser } from '../runtime/container-spec';

const MAX_ID = 4294967295;

interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}
interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

/** Reads a file of the image's rootfs; a symlink (which could point out of the rootfs) counts as absent. */
async function rootfsFile(rootfs: string, path: string): Promise<string | undefined> {
  const p = join(rootfs, path);
  try {
    const st = await lstat(p);
    if (!st.isFile()) return undefined;
    return await readFile(p, 'utf8');
  } catch {
    return undefined;
  }
}

export function parsePasswd(text: string): PasswdEntry[] {
  return text.split('\n').flatMap((line) => {
    const f = line.split(':');
    if (f.length < 4 || line.startsWith('#')) return [];
    const uid = Number(f[2]);
    const gid = Number(f[3]);
    return Number.isInteger(uid) && Number.isInteger(gid) ? [{ name: f[0]!, uid, gid }] : [];
  });
}

export function parseGroup(text: string): GroupEntry[] {
  return text.split('\n').flatMap((line) => {
    const f = line.split(':');
    if (f.length < 4 || line.startsWith('#')) return [];
    const gid = Number(f[2]);
    return Number.isInteger(gid) ? [{ name: f[0]!, gid, members: f[3]!.split(',').filter(Boolean) }] : [];
  });
}

function checkId(what: string, n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > MAX_ID) throw invalidArgument(`${what} must be between 0 and ${MAX_ID}, got ${n}`);
  return n;
}

export async function resolveUser(config: ContainerConfig, image: ImageRuntimeConfig, rootfs: string): Promise<ResolvedUser> {
  const sc = config.linux?.security_context;
  const passwd = parsePasswd((await rootfsFile(rootfs, 'etc/passwd')) ?? '');
  const groups = parseGroup((await rootfsFile(rootfs, 'etc/group')) ?? '');
  let userPart: string;
  let groupPart: string | undefined;
  if (sc?.run_as_username) userPart = sc.run_as_username;
  else if (sc?.run_as_user) userPart = String(checkId('run_as_user', sc.run_as_user.value));
  else if (image.User) [userPart, groupPart] = image.User.split(':') as [string, string | undefined];
  else userPart = '0';
  if (sc?.run_as_group && !sc.run_as_user && !sc.run_as_username) {
    // containerd checks this for the sandbox and the container alike
    if (!image.User) throw invalidArgument(`user group "${sc.run_as_group.value}" is specified without user`);
  }

  let uid: number;
  let gid = 0;
  let name: string | undefined;
  if (/^\d+$/.test(userPart)) {
    uid = checkId('user', Number(userPart));
    const entry = passwd.find((e) => e.uid === uid);
    if (entry) ({ gid, name } = entry);
  } else {
    const entry = passwd.find((e) => e.name === userPart);
    if (!entry) throw invalidArgument(`user ${JSON.stringify(userPart)} not found in the image's /etc/passwd`);
    ({ uid, gid, name } = entry);
  }
  if (groupPart !== undefined && groupPart !== '') {
    if (/^\d+$/.test(groupPart)) gid = checkId('group', Number(groupPart));
    else {
      const g = groups.find((e) => e.name === groupPart);
      if (!g) throw invalidArgument(`group ${JSON.stringify(groupPart)} not found in the image's /etc/group`);
      gid = g.gid;
    }
  }
  if (sc?.run_as_group) gid = checkId('run_as_group', sc.run_as_group.value);
  const member = name ? groups.filter((g) => g.members.includes(name!)).map((g) => g.gid) : [];
  const supplemental = (sc?.supplemental_groups ?? []).map((g) => checkId('supplemental_groups', g));
  return { uid, gid, additionalGids: [...new Set([gid, ...member, ...supplemental])] };
}
