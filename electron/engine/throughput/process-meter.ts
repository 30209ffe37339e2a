/**
 * The real meter: a sink and a source, each a tiny Node process (this runtime's own binary, so it works in the
 * packaged app too), one of them inside the pod's netns through nsenter. The sink accepts one connection, counts
 * bytes and prints {t, b} lines every 50 ms on its own clock; the engine reads them as they come (progress).
 * Both processes are bounded by the spec's time and byte limits and killed by pid if they overstay.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { PodscopeError } from '../../../shared/domain/errors';
import { nodeScriptEnv } from '../os/node-script-env';
import type { ByteSample } from './rate';
import type { ThroughputMeter, TransferOutcome, TransferSpec } from './types';

/**
 * argv: mode address port durationMs maxBytes (the source reads the port from stdin). Kept tiny and dependency-free:
 * it runs as `node -e`.
 */
const SCRIPT = String.raw`
const net = require('net');
const [mode, address, port, durationMs, maxBytes] = process.argv.slice(1);
const dur = Number(durationMs), max = Number(maxBytes);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const stop = (s, code) => { try { s.resetAndDestroy(); } catch { s.destroy(); } setTimeout(() => process.exit(code), 10); };
if (mode === 'sink') {
  const server = net.createServer({ pauseOnConnect: false }, (sock) => {
    server.close();
    // each sample is the time of the last read and the bytes counted by then: a point on the byte curve itself, not
    // a tick that fell between two reads (at 10 Mbit/s a 50 ms tick would otherwise be off by up to a read)
    let bytes = 0, t0 = 0, tLast = 0, timer;
    const now = () => Number(process.hrtime.bigint() / 1000n) / 1000;
    const finish = () => { clearInterval(timer); out({ t: tLast ? tLast - t0 : 0, b: bytes, done: true }); stop(sock, 0); };
    sock.on('data', (d) => {
      tLast = now();
      if (!t0) { t0 = tLast; timer = setInterval(() => { out({ t: tLast - t0, b: bytes }); if (now() - t0 >= dur) finish(); }, 50); }
      bytes += d.length;
    });
    sock.on('end', finish);
    sock.on('error', finish);
  });
  server.on('error', (e) => { out({ error: e.message }); process.exit(1); });
  server.listen({ host: address, port: Number(port) }, () => out({ port: server.address().port }));
} else {
  // the source starts beside the sink and waits for its port on stdin: the two processes start up at the same time
  let line = '';
  process.stdin.on('data', (d) => { line += d; if (line.includes('\n')) { process.stdin.pause(); send(Number(line.trim())); } });
}
function send(port) {
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  let sent = 0;
  const sock = net.connect({ host: address, port }, () => {
    const pump = () => { while (sent < max) { sent += chunk.length; if (!sock.write(chunk)) return; } stop(sock, 0); };
    sock.on('drain', pump);
    pump();
  });
  sock.on('error', (e) => { out({ error: e.message }); process.exit(1); });
  setTimeout(() => stop(sock, 0), dur + 2000);
}
`;

/** extra time a process may take past the transfer's own bound before it is killed */
const GRACE_MS = 5000;

interface Child {
  proc: ChildProcess;
  lines: AsyncIterableIterator<string>;
  exited: Promise<void>;
}

function start(args: string[], netnsPath: string | undefined, stdin: 'ignore' | 'pipe' = 'ignore'): Child {
  const node = [process.execPath, '-e', SCRIPT, ...args];
  const [file, ...argv] = netnsPath ? ['nsenter', `--net=${netnsPath}`, ...node] : node;
  const proc = spawn(file!, argv, { env: nodeScriptEnv(), stdio: [stdin, 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve();
    proc.once('close', () => resolve());
    proc.once('error', () => resolve());
  });
  proc.stderr!.resume();
  return { proc, lines: createInterface({ input: proc.stdout! })[Symbol.asyncIterator](), exited };
}

function kill(c: Child | undefined): void {
  if (c && c.proc.exitCode === null && c.proc.signalCode === null && c.proc.pid) {
    try {
      process.kill(c.proc.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

async function firstJson(c: Child, what: string): Promise<Record<string, unknown>> {
  const next = await c.lines.next();
  if (next.done) throw new PodscopeError('RuntimeError', `throughput ${what} exited before it was ready`);
  const doc = JSON.parse(next.value) as Record<string, unknown>;
  if (typeof doc.error === 'string') throw new PodscopeError('RuntimeError', `throughput ${what}: ${doc.error}`);
  return doc;
}

export class ProcessThroughputMeter implements ThroughputMeter {
  async transfer(spec: TransferSpec): Promise<TransferOutcome> {
    const sinkInPod = spec.direction === 'ingress';
    let sink: Child | undefined;
    let source: Child | undefined;
    const hardStop = setTimeout(
      () => {
        kill(sink);
        kill(source);
      },
      spec.durationMs + 2 * GRACE_MS,
    );
    const onAbort = () => {
      kill(sink);
      kill(source);
    };
    spec.signal?.addEventListener('abort', onAbort);
    try {
      sink = start(['sink', spec.listenAddress, '0', String(spec.durationMs), '0'], sinkInPod ? spec.netnsPath : undefined);
      source = start(
        ['source', spec.listenAddress, '-', String(spec.durationMs), String(spec.maxBytes)],
        sinkInPod ? undefined : spec.netnsPath,
        'pipe',
      );
      source.proc.stdin!.on('error', () => undefined);
      const { port } = await firstJson(sink, 'receiver');
      const target = `${spec.listenAddress.includes(':') ? `[${spec.listenAddress}]` : spec.listenAddress}:${String(port)}`;
      source.proc.stdin!.end(`${String(port)}\n`);
      const samples: ByteSample[] = [];
      for await (const line of sink.lines) {
        const doc = JSON.parse(line) as { t?: number; b?: number; done?: boolean; error?: string };
        if (typeof doc.t === 'number' && typeof doc.b === 'number') {
          const s = { tMs: doc.t, bytes: doc.b };
          // the same read reported again (no bytes since the last tick) adds no point to the curve
          const prev = samples[samples.length - 1];
          if (!prev || prev.tMs !== s.tMs || doc.done) samples.push(s);
          spec.onSample?.(s);
          // known well enough: stop here (finally ends both processes) rather than at the time bound
          if (!doc.done && spec.enough?.(samples)) break;
        }
      }
      if (spec.signal?.aborted) throw new PodscopeError('Canceled', 'throughput measurement canceled');
      return { samples, path: sinkInPod ? `host → ${target} (pod netns)` : `pod netns → ${target} (host)` };
    } finally {
      clearTimeout(hardStop);
      spec.signal?.removeEventListener('abort', onAbort);
      // the sink has finished: the source is stopped now rather than at its own bound
      kill(source);
      kill(sink);
      await Promise.all([sink?.exited, source?.exited]);
    }
  }
}
