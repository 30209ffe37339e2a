/**
 * Debian's busybox-static, where it is installed (scripts/setup.sh installs it): one static binary whose applets
 * (`sh`, `mount`, `umount`) start without the dynamic loader. An exec of `busybox mount` measured 1.2–1.35 ms against
 * 2.25–2.75 ms for util-linux `mount`, and its shell runs `mount` in its own process. Used where a hot path execs
 * one of those per container; everything falls back to the util-linux tools when busybox is missing.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';

export const BUSYBOX_PATHS = ['/usr/bin/busybox', '/bin/busybox'];

const executable = (path: string) =>
  access(path, constants.X_OK).then(
    () => true,
    () => false,
  );

/** the first busybox on BUSYBOX_PATHS that can be executed, else undefined */
export async function findBusybox(isExecutable: (path: string) => Promise<boolean> = executable): Promise<string | undefined> {
  for (const p of BUSYBOX_PATHS) if (await isExecutable(p)) return p;
  return undefined;
}

let found: Promise<string | undefined> | undefined;

/** findBusybox, looked up once per process */
export function busyboxOnce(): Promise<string | undefined> {
  found ??= findBusybox();
  return found;
}
