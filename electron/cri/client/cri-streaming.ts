/**
 * ContainerStreaming over any CRI runtime.v1 endpoint: the Exec, Attach and PortForward RPCs hand out a URL on the
 * runtime's streaming server, and the streaming client (../streaming/client.ts) runs the session there over SPDY —
 * what containerd 1.6/1.7 and CRI-O serve, and what a Podscope daemon serves too. So the app and the CLI exec into a
 * containerd pod exactly as into a built-in one.
 */
import type { ContainerStreaming } from '../../engine/api';
import { runPortForward, runRemoteCommand, type StreamingClientOptions } from '../streaming/client';
import type { CriConnection } from './connection';

/**
 * Calls are made with the endpoint's normal deadline; the session itself has none (an interactive shell lasts as
 * long as the user wants). With tty, stderr is not requested: CRI refuses tty with stderr (one terminal stream).
 */
export function criStreaming(connected: () => Promise<CriConnection>, options: StreamingClientOptions = {}): ContainerStreaming {
  return {
    async exec(req) {
      const conn = await connected();
      const stderr = req.tty ? null : req.stderr;
      const { url } = await conn.call((c) => c.exec, {
        containerId: req.containerId,
        cmd: req.cmd,
        tty: req.tty,
        stdin: req.stdin !== null,
        stdout: req.stdout !== null,
        stderr: stderr !== null,
      });
      return runRemoteCommand(url, { ...req, stderr }, options);
    },
    async attach(req) {
      const conn = await connected();
      const stderr = req.tty ? null : req.stderr;
      const { url } = await conn.call((c) => c.attach, {
        containerId: req.containerId,
        tty: req.tty,
        stdin: req.stdin !== null,
        stdout: req.stdout !== null,
        stderr: stderr !== null,
      });
      await runRemoteCommand(url, { ...req, stderr }, options).catch((e: unknown) => {
        // aborting is how a client detaches: the session ending that way is attach's normal end
        if (!req.signal?.aborted) throw e;
      });
    },
    async portForward(req) {
      const conn = await connected();
      const { url } = await conn.call((c) => c.portForward, { podSandboxId: req.sandboxId, port: [req.port] });
      await runPortForward(url, req.port, req.stream, { ...options, ...(req.signal && { signal: req.signal }) });
    },
  };
}
