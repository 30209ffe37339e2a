/**
 * Starting a daemon that answers over a sync pipe (conmon: `_OCI_SYNCPIPE=3`), and waiting for its first JSON line.
 *
 * conmon daemonizes at once, keeps the pipe, runs the runtime's `create` and writes one JSON line on fd 3: the
 * container's pid or why the create failed. The starter only needs that line (or, if the daemon closes its pipes
 * without one, its exit and stderr); the daemon then lives on with no tie to it. SpawnHelperRunner starts it from its
 * helper process (spawn-helper.ts: a fork of the engine blocks its event loop for a time that grows with its memory);
 * this is the same thing in-process, for runners without a helper.
 */
import { spawn } from 'node:child_process';
import { MAX_STDERR_BYTES, type SyncPipeOutcome, type SyncPipeRequest } from './exec';

export type { SyncPipeOutcome, SyncPipeRequest };

/**
 * The first line of `text` that is a whole JSON document, if any has arrived. The last piece may still be arriving;
 * it counts once it parses (an object parses only when its closing brace is there).
 */
export function firstJsonLine(text: string): string | undefined {
  for (const l of text.split('\n')) {
    if (!l.trim().startsWith('{')) continue;
    try {
      JSON.parse(l);
      return l;
    } catch {
      /* not a document: keep looking */
    }
  }
  return undefined;
}

/** In-process: spawn with fd 3 a pipe, resolve on the first JSON line or when the pipes close without one. */
export function launchWithSyncPipeInProcess(req: SyncPipeRequest): Promise<SyncPipeOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let text = '';
    let stderr = '';
    const child = spawn(req.file, req.args, {
      // its own session: the daemon keeps no tie to the starter
      detached: true,
      cwd: req.cwd,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env: req.env,
    });
    const sync = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
    const settle = (o: SyncPipeOutcome) => {
      if (settled) return;
      settled = true;
      // the daemon holds the other ends: let go of ours, or they keep the event loop alive
      child.unref();
      sync.destroy();
      child.stderr?.destroy();
      resolve(o);
    };
    child.stderr?.on('data', (b: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += b.toString();
    });
    sync.on('data', (b: Buffer) => {
      text += b.toString();
      const line = firstJsonLine(text);
      if (line !== undefined) settle({ kind: 'line', line, stderr });
    });
    child.once('error', (e: NodeJS.ErrnoException) => settle({ kind: 'spawn-error', code: e.code ?? '', message: e.message }));
    child.once('close', (code) => settle({ kind: 'closed', exitCode: code, stderr }));
  });
}
