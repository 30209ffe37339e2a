/**
 * Saving a conflist from the lab into the engine's conf dir: validated first (nothing is written otherwise), the
 * previous file kept as <file>.bak-<time>, and the new one written durably (temp file, fsync, rename, fsync dir).
 * The temp file's name ends in .tmp, not a conf extension, so a watcher's reload in between never loads half a file.
 */
import { copyFile, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { LAB_SAVE_WARNING, LabSaveRequestSchema, type LabSaveRequest, type LabSaveResult } from '../../../shared/domain/lab';
import { writeFileDurable } from '../os/durable-write';
import { invalidConflist } from './refusal';
import { validateConflistText } from './validate';

/** 20261125T201500Z: a backup's suffix */
export function compactTime(now = new Date()): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

export async function saveConflist(confDir: string, binDirs: string[], raw: LabSaveRequest): Promise<LabSaveResult> {
  const req = LabSaveRequestSchema.parse(raw);
  const v = await validateConflistText(req.text, binDirs);
  if (!v.ok || !v.parsed) throw invalidConflist(v, 'nothing was written');
  const target = path.join(confDir, req.fileName ?? `${v.parsed.name}.conflist`);
  await mkdir(confDir, { recursive: true });
  let backup: string | undefined;
  if (await stat(target).catch(() => undefined)) {
    backup = `${target}.bak-${compactTime()}`;
    await copyFile(target, backup);
  }
  try {
    await writeFileDurable(target, req.text.endsWith('\n') ? req.text : `${req.text}\n`, { mode: 0o644 });
  } catch (e) {
    throw new PodscopeError('RuntimeError', `cannot write ${target}: ${(e as Error).message}`, { cause: e });
  }
  return { path: target, ...(backup ? { backup } : {}), warning: LAB_SAVE_WARNING };
}
