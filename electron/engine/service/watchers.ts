/**
 * What keeps the engine's view current without anyone asking: a watch on the CNI conf dir (containerd reloads on
 * write/rename/remove, docs/semantics.md#conf-dir-watch) and a light pause-liveness poll so a pause process that dies shows up as NOTREADY
 * in every open window, not only at the next list.
 */
import { watch, type FSWatcher } from 'node:fs';

export interface Stoppable {
  stop(): void;
}

/** Calls onChange (debounced) when a file in dir is written, renamed or removed. A missing dir is not watched. */
export function watchConfDir(dir: string, onChange: () => void, debounceMs = 150): Stoppable {
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    // persistent: false — the watch alone must never keep a CLI process alive
    watcher = watch(dir, { persistent: false }, () => {
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
      timer.unref();
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = undefined;
  }
  return {
    stop() {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}

export function every(ms: number, fn: () => Promise<void>): Stoppable {
  let running = false;
  const timer = setInterval(() => {
    if (running) return; // a slow round is never stacked on top of another
    running = true;
    fn()
      .catch(() => undefined)
      .finally(() => (running = false));
  }, ms);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** true on the first call and on every n-th after it: which background rounds take the exact look */
export function everyNth(n: number): () => boolean {
  let round = 0;
  return () => round++ % n === 0;
}
