/**
 * The real meter: a sink and a source, each a tiny Node process (this runtime's own binary, so it works in the
 * packaged app too), one of them inside the pod's netns through nsenter. The sink accepts one connection, counts
 * bytes and prints {t, b} lines every 50 ms on its own clock; the engine reads them as they come (progress).
 * Both processes are bounded by the spec's time and byte limits and killed by pid if they overstay.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { PodscopeError } from '../../../shared/domain/errors';
import type { ByteSample } from './rate';
import type { ThroughputMeter, TransferOutcome, TransferSpec } from './types';

/** argv: mode address port durationMs maxBytes. Kept tiny and dependency-free: it runs as `node -e`. */
const SCRIPT = String.raw`
const net = require('net');
const [mode, address, port, durationMs, maxBytes] = process.argv.slice(1);
const dur = Number(durationMs), max = Number(maxBytes);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const stop = (s, code) => { try { s.resetAndDestroy(); } catch { s.destroy(); } setTimeout(() => process.exit(code), 10); };
if (mode === 'sink') {
  const server = net.createServer({ pauseOnConnect: false }, (sock) => {
    server.close();
    let bytes = 0, t0 = 0, timer;
    const now = () => Number(process.hrtime.bigint() / 1000n) / 1000;
    const finish = () => { clearInterval(timer); out({ t: t0 ? now() - t0 : 0, b: bytes, done: true }); stop(sock, 0); };
    sock.on('data', (d) => {
      if (!t0) { t0 = now(); timer = setInterval(() => { out({ t: now() - t0, b: bytes }); if (now() - t0 >= dur) finish(); }, 50); }
      bytes += d.length;
    });
    sock.on('end', finish);
    sock.on('error', finish);
  });
  server.on('error', (e) => { out({ error: e.message }); process.exit(1); });
  server.listen({ host: address, port: Number(port) }, () => out({ port: server.address().port }));
} else {
  const chunk = Buffer.alloc(256 * 1024, 0x5a);
  let sent = 0;
  const sock = net.connect({ host: address, port: Number(port) }, () => {
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

function start(args: string[], netnsPath: string | undefined): Child {
  const node = [process.execPath, '-e', SCRIPT, ...args];
  const [file, ...argv] = netnsPath ? ['nsenter', `--net=${netnsPath}`, ...node] : node;
  // ELECTRON_RUN_AS_NODE lets the Electron binary run the script as plain Node; node ignores it
  const proc = spawn(file!, argv, { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
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
      const { port } = await firstJson(sink, 'receiver');
      const target = `${spec.listenAddress.includes(':') ? `[${spec.listenAddress}]` : spec.listenAddress}:${String(port)}`;
      source = start(
        ['source', spec.listenAddress, String(port), String(spec.durationMs), String(spec.maxBytes)],
        sinkInPod ? undefined : spec.netnsPath,
      );
      const samples: ByteSample[] = [];
      for await (const line of sink.lines) {
        const doc = JSON.parse(line) as { t?: number; b?: number; error?: string };
        if (typeof doc.t === 'number' && typeof doc.b === 'number') {
          const s = { tMs: doc.t, bytes: doc.b };
          samples.push(s);
          spec.onSample?.(s);
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
