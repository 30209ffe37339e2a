/**
 * The conmon attach client's framing, against a SOCK_SEQPACKET server standing in for conmon's attach socket: output
 * messages carry their stream in the first byte, input goes raw in pieces conmon reads whole, the client's end of
 * input half-closes (stdin_once) or detaches, and a resize is a line on the ctl fifo.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { SeqpacketServer, type SeqpacketSocket } from 'node-unix-socket';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attachToConmon, CONMON_MAX_INPUT } from '../../electron/engine/runtime/conmon-attach';
import { hasCode } from '../../shared/domain/errors';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, cb: () => void) {
    this.text += chunk.toString();
    cb();
  }
}

let dir: string;
let server: SeqpacketServer | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'conmon-attach-'));
});

afterEach(async () => {
  server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** a stand-in for conmon: its attach socket in `dir`; resolves with the first connection */
function listen(): Promise<SeqpacketSocket> {
  server = new SeqpacketServer();
  const conn = new Promise<SeqpacketSocket>((resolve) => server!.once('connection', resolve));
  server.listen(join(dir, 'attach'));
  return conn;
}

const msg = (stream: number, text: string) => Buffer.concat([Buffer.from([stream]), Buffer.from(text)]);

const until = async (what: string, fn: () => boolean) => {
  for (let i = 0; i < 200 && !fn(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!fn()) throw new Error(`gave up waiting for ${what}`);
};

describe('attach through conmon', () => {
  it('demultiplexes output by its first byte (2 stdout, 3 stderr) and ends when conmon closes', async () => {
    const conn = listen();
    const out = new Sink();
    const err = new Sink();
    const done = attachToConmon(dir, { stdin: null, stdout: out, stderr: err, tty: false });
    const c = await conn;
    c.write(msg(2, 'out-1\n'));
    c.write(msg(3, 'err-1\n'));
    c.write(msg(2, 'out-2\n'));
    await until('output', () => out.text.length === 12 && err.text.length === 6);
    c.destroy();
    await done;
    expect(out.text).toBe('out-1\nout-2\n');
    expect(err.text).toBe('err-1\n');
  });

  it('with a terminal, a stderr message goes to stdout (one stream)', async () => {
    const conn = listen();
    const out = new Sink();
    const done = attachToConmon(dir, { stdin: null, stdout: out, stderr: null, tty: true });
    const c = await conn;
    c.write(msg(2, 'a'));
    c.write(msg(3, 'b'));
    await until('output', () => out.text.length === 2);
    c.destroy();
    await done;
    expect(out.text).toBe('ab');
  });

  it('sends input raw, in messages no larger than conmon reads; stdin_once half-closes and keeps the output', async () => {
    const conn = listen();
    const stdin = new PassThrough();
    const out = new Sink();
    const done = attachToConmon(dir, { stdin, stdout: out, stderr: null, tty: false, stdinOnce: true });
    const c = await conn;
    const got: Buffer[] = [];
    let ended = false;
    c.on('data', (b: Buffer) => got.push(b));
    c.on('end', () => (ended = true));
    const big = Buffer.alloc(CONMON_MAX_INPUT * 2 + 5, 'x');
    stdin.write('hello');
    stdin.end(big);
    await until('the half-close', () => ended);
    expect(got.every((b) => b.length <= CONMON_MAX_INPUT)).toBe(true);
    expect(Buffer.concat(got).toString()).toBe(`hello${big.toString()}`);
    // still attached: output after the half-close arrives
    c.write(msg(2, 'after'));
    await until('output', () => out.text === 'after');
    c.destroy();
    await done;
  });

  it('without stdin_once, the end of input detaches the client', async () => {
    const conn = listen();
    const stdin = new PassThrough();
    const done = attachToConmon(dir, { stdin, stdout: new Sink(), stderr: new Sink(), tty: false });
    const c = await conn;
    let gone = false;
    c.on('end', () => (gone = true));
    c.on('close', () => (gone = true));
    stdin.end();
    await done;
    await until('the detach', () => gone);
  });

  it('a resize is "1 <height> <width>" on the ctl fifo', async () => {
    execFileSync('mkfifo', [join(dir, 'ctl')]);
    const fifo = readFile(join(dir, 'ctl'), 'utf8');
    const conn = listen();
    let listener: ((s: { width: number; height: number }) => void) | undefined;
    const ac = new AbortController();
    const done = attachToConmon(dir, {
      stdin: null,
      stdout: new Sink(),
      stderr: null,
      tty: true,
      resize: { subscribe: (l) => ((listener = l), () => (listener = undefined)) },
      signal: ac.signal,
    });
    await conn;
    await until('the subscription', () => listener !== undefined);
    listener!({ width: 120, height: 40 });
    expect(await fifo).toBe('1 40 120\n');
    ac.abort();
    await done;
    expect(listener).toBeUndefined();
  });

  it('no conmon listening is FailedPrecondition saying the container has exited', async () => {
    const err = await attachToConmon(dir, { stdin: null, stdout: new Sink(), stderr: null, tty: false }).catch((e: unknown) => e);
    expect(hasCode(err, 'FailedPrecondition')).toBe(true);
    expect((err as Error).message).toMatch(/conmon does not answer.*has exited/);
  });
});
