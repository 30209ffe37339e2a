/**
 * Exec round-trip latency through the CRI streaming server, in one process over loopback (no runc): a token, then a
 * whole session on its URL that runs a no-op "process" (an in-process ContainerStreaming that exits 0 at once), over
 * SPDY/3.1 and over WebSocket; and a 1-byte stdin → stdout echo inside one open session (keystroke latency).
 * `npx tsx bench/streaming-latency.ts [sessions]`. Prints figures; asserts nothing.
 */
import { PassThrough, Writable } from 'node:stream';
import type { ContainerStreaming } from '../electron/engine/containers/streaming';
import { startStreamingServer } from '../electron/cri/streaming/server';
import { runRemoteCommand, type StreamingTransport } from '../electron/cri/streaming/client';
import { percentile } from './stats';

const fmt = (ms: number) => ms.toFixed(2);

const sessions = Number(process.argv[2] ?? 300);

const streaming: ContainerStreaming = {
  async exec(req) {
    if (req.cmd[0] === 'echo' && req.stdin) {
      for await (const chunk of req.stdin) req.stdout?.write(chunk);
    }
    return { exitCode: 0 };
  },
  async attach() {},
  async portForward() {},
};

const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

async function main(): Promise<void> {
  const server = await startStreamingServer({ streaming });
  try {
    for (const transport of ['spdy', 'websocket'] as StreamingTransport[]) {
      const times: number[] = [];
      for (let i = 0; i < sessions + 50; i++) {
        const t0 = process.hrtime.bigint();
        const url = server.getExec({ containerId: 'c', cmd: ['true'], stdin: false, stdout: true, stderr: false, tty: false });
        await runRemoteCommand(url, { stdin: null, stdout: sink(), stderr: null, tty: false }, { transport });
        if (i >= 50) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      times.sort((a, b) => a - b);
      console.log(
        `exec session (${transport}): p50 ${fmt(percentile(times, 50))} ms, p99 ${fmt(percentile(times, 99))} ms over ${sessions}`,
      );

      // keystroke latency: one byte in, the same byte out, inside an open session
      const url = server.getExec({ containerId: 'c', cmd: ['echo'], stdin: true, stdout: true, stderr: false, tty: false });
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const done = runRemoteCommand(url, { stdin, stdout, stderr: null, tty: false }, { transport });
      const echoes: number[] = [];
      for (let i = 0; i < sessions + 50; i++) {
        const t0 = process.hrtime.bigint();
        const back = new Promise((r) => stdout.once('data', r));
        stdin.write('x');
        await back;
        if (i >= 50) echoes.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      stdin.end();
      await done;
      echoes.sort((a, b) => a - b);
      console.log(
        `keystroke echo (${transport}): p50 ${fmt(percentile(echoes, 50))} ms, p99 ${fmt(percentile(echoes, 99))} ms over ${sessions}`,
      );
    }
  } finally {
    await server.close();
  }
}

await main();
