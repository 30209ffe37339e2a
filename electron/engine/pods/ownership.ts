/**
 * Which host resources belong to this engine. Paths cannot say it (a run dir or netns dir may be shared, and the
 * netns dir is shared with containerd, whose names look like ours), so ownership is an identity: a random id kept in
 * the state dir (`<stateDir>/engine-id`). It is stamped on every pause container as an OCI annotation and folded into
 * every netns name, and start-up only ever stops, kills or deletes what carries it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { newNetnsName } from '../netns/linux-netns';
import type { NetnsManager } from '../netns/types';

/** the state dir id of the engine that created the container (runc keeps annotations; `runc list` shows them) */
export const OWNER_ANNOTATION = 'io.podscope.state-dir-id';
/** the state dir path, for people reading `runc list` */
export const STATE_DIR_ANNOTATION = 'io.podscope.state-dir';
export const STATE_DIR_ID_FILE = 'engine-id';
const ID_RE = /^[0-9a-f]{32}$/;
/** bytes of the netns name (of 16) that carry the owner tag; the other 10 stay random */
const NETNS_TAG_BYTES = 6;

export interface EngineOwner {
  /** undefined only for a read-only engine on a state dir no engine has written yet: it owns nothing */
  stateDirId: string | undefined;
}

/**
 * Reads the state dir id, creating it on first use (never in read-only mode). Written to a temp file and linked
 * into place, so a crash leaves either no id or a whole one, and two writers cannot both win.
 * @param onTempRemoved told about a temp file a crashed writer left (start-up garbage collection)
 */
export async function loadStateDirId(
  stateDir: string,
  readOnly: boolean,
  onTempRemoved?: (file: string) => void,
): Promise<string | undefined> {
  const file = join(stateDir, STATE_DIR_ID_FILE);
  const read = async () => {
    const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
    if (text === undefined) return undefined;
    const id = text.trim();
    if (!ID_RE.test(id)) {
      throw new PodscopeError(
        'FailedPrecondition',
        `${file} does not hold a state dir id (32 hex digits): it says which containers and namespaces this state dir owns, so it is never replaced silently; restore it or remove it (the engine then owns nothing it made before)`,
      );
    }
    return id;
  };
  if (readOnly) return read();
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  for (const name of await readdir(stateDir).catch(() => [] as string[])) {
    if (!name.startsWith(`${STATE_DIR_ID_FILE}.tmp-`)) continue;
    await rm(join(stateDir, name), { force: true });
    onTempRemoved?.(join(stateDir, name));
  }
  const existing = await read();
  if (existing) return existing;
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
  try {
    await fh.writeFile(`${randomBytes(16).toString('hex')}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(tmp, file); // EEXIST: another writer got there first, and its id is the one
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    await rm(tmp, { force: true });
  }
  return read();
}

/** The owner tag folded into netns names: derived from the state dir id, so a restarted engine recognises its own. */
export function netnsTag(stateDirId: string): Buffer {
  return createHash('sha256').update(`podscope-netns:${stateDirId}`).digest().subarray(0, NETNS_TAG_BYTES);
}

/**
 * A netns name of the containerd shape (`cni-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, 16 bytes) whose first 6 bytes
 * are the owner tag: 48 bits make mistaking a containerd namespace (16 random bytes) for ours a 1-in-2^48 event,
 * and even then it is only collected when no record of ours names it and it sits in our netns dir.
 */
export function ownedNetnsName(tag: Buffer): string {
  return newNetnsName(Buffer.concat([tag, randomBytes(16 - tag.length)]));
}

export function isOwnedNetnsPath(path: string, tag: Buffer): boolean {
  const prefix = newNetnsName(Buffer.concat([tag, Buffer.alloc(16 - tag.length)])).slice(0, 'cni-'.length + 8 + 1 + 4 + 1);
  return basename(path).startsWith(prefix);
}

/** The engine's NetnsManager with names that carry the owner tag; every other call goes to the real one. */
export function withOwnedNetnsNames(inner: NetnsManager, tag: () => Buffer | undefined): NetnsManager {
  return {
    get dir() {
      return inner.dir;
    },
    newPath: () => {
      const t = tag();
      return t ? join(inner.dir, ownedNetnsName(t)) : inner.newPath();
    },
    create: (signal, path) => inner.create(signal, path),
    remove: (path) => inner.remove(path),
    isClosed: (path) => inner.isClosed(path),
    list: () => inner.list(),
  };
}

/** Adds the ownership annotations to a pause spec built by buildPauseSpec. */
export function stampOwner(spec: unknown, stateDirId: string | undefined, stateDir: string): unknown {
  if (!stateDirId || typeof spec !== 'object' || spec === null) return spec;
  const s = spec as { annotations?: Record<string, string> };
  s.annotations = { ...s.annotations, [OWNER_ANNOTATION]: stateDirId, [STATE_DIR_ANNOTATION]: stateDir };
  return spec;
}
