import { readFile } from 'node:fs/promises';

/** The engine's own OOM score adjustment: the floor for the pause container's score (see oci-spec). */
export async function readEngineOomScoreAdj(file = '/proc/self/oom_score_adj'): Promise<number> {
  const n = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
  return Number.isFinite(n) ? n : 0;
}
