/**
 * Podscope's streaming client against a real containerd (Debian's 1.6.20) streaming server: the CRI client's
 * ContainerStreaming (Exec/Attach/PortForward RPC, then SPDY/3.1 to the URL containerd returns) runs a process in a
 * containerd container with stdout/stderr apart and its exit code, echoes stdin, gives a tty whose size follows the
 * resizes, attaches to a container's own stdio, and forwards a connection into the pod's netns.
 * Bridge and pod subnets from the test kit's allocator (a lease), temp dirs from the containerd fixture.
 */
import { connect, createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContainerd, type ContainerdFixture } from '../../testkit/containerd-fixture';
import { PAUSE_IMAGE_REF } from '../../testkit/pause-image';
import type { TerminalSize } from '../../electron/engine/containers/streaming';

let ctd: ContainerdFixture | undefined;
let pod: string;
let shell: string;
let attachable: string;

beforeAll(async () => {
  ctd = await startContainerd({});
  ({ id: pod } = await ctd.api.run({
    config: { metadata: { name: 'stream', namespace: 'pss2', uid: 'pss2-stream', attempt: 0 }, hostname: 'stream' },
  }));
  const create = async (name: string, command: string[], extra: Record<string, unknown> = {}) => {
    const { id } = await ctd!.api.createContainer({
      podSandboxId: pod,
      config: { metadata: { name }, image: { image: PAUSE_IMAGE_REF }, command, ...extra },
      sandboxConfig: { metadata: { name: 'stream', namespace: 'pss2', uid: 'pss2-stream', attempt: 0 } },
    });
    await ctd!.api.startContainer(id);
    return id;
  };
  // a pod port that answers each connection with a line (busybox nc, one connection at a time)
  shell = await create('shell', ['/bin/sh', '-c', 'while :; do echo pong | /bin/busybox nc -l -p 8080; done']);
  attachable = await create('echo', ['/bin/busybox', 'cat'], { stdin: true });
}, 120_000);

afterAll(async () => {
  await ctd?.stop();
});

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString() };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!cond()) throw new Error(`never happened: ${what}`);
}

describe('streaming into containerd 1.6 through its streaming server (SPDY)', () => {
  it('exec: stdout and stderr apart, exit code 3 from the v4 error stream', async () => {
    const out = collect();
    const err = collect();
    const r = await ctd!.api.streaming.exec({
      containerId: shell,
      cmd: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'],
      stdin: null,
      stdout: out.stream,
      stderr: err.stream,
      tty: false,
    });
    expect(r.exitCode).toBe(3);
    expect(out.text()).toBe('out\n');
    expect(err.text()).toBe('err\n');
  });

  it('exec -i: stdin reaches the process and EOF ends it', async () => {
    const out = collect();
    const stdin = new PassThrough();
    const done = ctd!.api.streaming.exec({
      containerId: shell,
      cmd: ['/bin/busybox', 'cat'],
      stdin,
      stdout: out.stream,
      stderr: null,
      tty: false,
    });
    stdin.end('through containerd\n');
    expect((await done).exitCode).toBe(0);
    expect(out.text()).toBe('through containerd\n');
  });

  it('exec -t: the terminal size the client sends is the size the process sees', async () => {
    const out = collect();
    const stdin = new PassThrough();
    const listeners = new Set<(s: TerminalSize) => void>();
    const resize = {
      subscribe(l: (s: TerminalSize) => void) {
        listeners.add(l);
        l({ width: 101, height: 33 });
        return () => listeners.delete(l);
      },
    };
    const done = ctd!.api.streaming.exec({
      containerId: shell,
      cmd: ['/bin/sh', '-c', 'while read x; do [ "$x" = q ] && exit 0; /bin/busybox stty size; done'],
      stdin,
      stdout: out.stream,
      stderr: null,
      tty: true,
      resize,
    });
    // the resize is applied asynchronously: ask until the process reports it
    await until(() => {
      stdin.write('\n');
      return out.text().includes('33 101');
    }, 'stty size 33 101');
    listeners.forEach((l) => l({ width: 120, height: 40 }));
    await until(() => {
      stdin.write('\n');
      return out.text().includes('40 120');
    }, 'stty size 40 120');
    stdin.write('q\n');
    expect((await done).exitCode).toBe(0);
  });

  it('attach -i: input to the container’s own stdin comes back on its stdout; aborting detaches', async () => {
    const out = collect();
    const stdin = new PassThrough();
    const detach = new AbortController();
    const done = ctd!.api.streaming.attach({
      containerId: attachable,
      stdin,
      stdout: out.stream,
      stderr: collect().stream,
      tty: false,
      signal: detach.signal,
    });
    await until(() => {
      stdin.write('ping\n');
      return out.text().includes('ping\n');
    }, 'echo from the attached container');
    detach.abort();
    await done;
    expect((await ctd!.api.containerStatus(attachable)).state).toBe('CONTAINER_RUNNING');
  });

  it('port-forward: a local connection reaches the pod port inside its netns', async () => {
    const local = createServer({ allowHalfOpen: true }, (sock) => {
      void ctd!.api.streaming.portForward({ sandboxId: pod, port: 8080, stream: sock }).catch(() => sock.destroy());
    });
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
    // the first tries may come before nc listens again: each is a fresh connection, as a user would retry
    let answer = '';
    for (let i = 0; i < 50 && !answer.includes('pong'); i++) {
      answer = await new Promise<string>((resolve) => {
        const c = connect({ host: '127.0.0.1', port: (local.address() as { port: number }).port });
        const got: Buffer[] = [];
        c.on('data', (d: Buffer) => got.push(d));
        c.on('error', () => resolve(''));
        c.on('close', () => resolve(Buffer.concat(got).toString()));
      });
      if (!answer.includes('pong')) await new Promise((r) => setTimeout(r, 100));
    }
    local.close();
    expect(answer).toBe('pong\n');
  });
});
