/**
 * Exec round-trip latency through engine.streaming: `echo` in a running container, from the call to the resolved
 * exit code with the output in hand, n times each without and with a terminal. Prints p50/p95; asserts nothing.
 * Run from a real test (tests/real/streaming-real.test.ts) that owns the pod and the container.
 */
import { Writable } from 'node:stream';
import type { ContainerStreaming } from '../electron/engine/containers/streaming';

export interface LatencyStats {
  n: number;
  p50: number;
  p95: number;
}

function stats(ms: number[]): LatencyStats {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { n: s.length, p50: at(0.5), p95: at(0.95) };
}

export async function measureExecLatency(
  streaming: ContainerStreaming,
  containerId: string,
  n = 20,
  /** ExecSync of the same command, for comparison (plain `runc exec` with pipes, no streaming) */
  execSync?: (id: string, cmd: string[]) => Promise<unknown>,
): Promise<{ pipes: LatencyStats; tty: LatencyStats; execSync?: LatencyStats }> {
  const once = async (tty: boolean) => {
    let text = '';
    const stdout = new Writable({
      write(chunk: Buffer, _e, cb) {
        text += chunk.toString();
        cb();
      },
    });
    const t0 = performance.now();
    const r = await streaming.exec({ containerId, cmd: ['echo', 'ping'], stdin: null, stdout, stderr: null, tty });
    const ms = performance.now() - t0;
    if (r.exitCode !== 0 || !text.startsWith('ping')) throw new Error(`echo gave ${r.exitCode} ${JSON.stringify(text)}`);
    return ms;
  };
  const pipes: number[] = [];
  const tty: number[] = [];
  const sync: number[] = [];
  await once(false); // warm the page cache for runc
  for (let i = 0; i < n; i++) {
    pipes.push(await once(false));
    tty.push(await once(true));
    if (execSync) {
      const t0 = performance.now();
      await execSync(containerId, ['echo', 'ping']);
      sync.push(performance.now() - t0);
    }
  }
  return { pipes: stats(pipes), tty: stats(tty), ...(execSync && { execSync: stats(sync) }) };
}
