/**
 * The CRI log format (kubelet's logs.go): record parsing, P/F joining per stream, since/tail/stream filters, and a
 * follower that crosses a rotation (rename + a new file at log_path, as kubelet rotates and the shim reopens) without
 * losing or repeating a line. Temp dirs /tmp/pss1-*.
 */
import { appendFile, mkdtemp, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openContainerLog } from '../../electron/engine/containers/log-reader';
import {
  CriLogJoiner,
  formatLogEntry,
  parseCriLog,
  parseCriLogLine,
  parseSince,
  rfc3339ToNs,
  type LogEntry,
} from '../../shared/domain/cri-log';

const T = (s: number, ns = 0) => `2026-11-23T10:00:${String(s).padStart(2, '0')}.${String(ns).padStart(9, '0')}Z`;
const rec = (t: string, stream: string, tag: string, text: string) => `${t} ${stream} ${tag} ${text}\n`;

describe('parsing', () => {
  it('reads a record; the text keeps its spaces; an empty F record is an empty line; junk is skipped', () => {
    expect(parseCriLogLine(`${T(1)} stdout F  two  spaces `)).toEqual({
      time: T(1),
      stream: 'stdout',
      partial: false,
      text: ' two  spaces ',
    });
    expect(parseCriLogLine(`${T(1)} stderr F`)).toEqual({ time: T(1), stream: 'stderr', partial: false, text: '' });
    expect(parseCriLogLine(`${T(1)} stdout X text`)).toBeUndefined();
    expect(parseCriLogLine(`yesterday stdout F text`)).toBeUndefined();
    expect(parseCriLogLine('')).toBeUndefined();
  });

  it('joins P records with the F that ends them, per stream: a stderr line in between stays whole', () => {
    const text =
      rec(T(1), 'stdout', 'P', 'aaa') +
      rec(T(2), 'stderr', 'F', 'err line') +
      rec(T(3), 'stdout', 'P', 'bbb') +
      rec(T(4), 'stdout', 'F', 'ccc');
    const { entries, rest } = parseCriLog(text);
    expect(rest).toBe('');
    expect(entries).toEqual([
      { time: T(2), stream: 'stderr', text: 'err line' },
      // the joined line carries its first record's time
      { time: T(1), stream: 'stdout', text: 'aaabbbccc' },
    ]);
  });

  it('keeps an unfinished last line for the next chunk, and the joiner carries a P record across chunks', () => {
    const joiner = new CriLogJoiner();
    const full = rec(T(1), 'stdout', 'P', 'x'.repeat(5)) + rec(T(2), 'stdout', 'F', 'y');
    const a = parseCriLog(full.slice(0, 20), joiner);
    expect(a.entries).toEqual([]);
    const b = parseCriLog(a.rest + full.slice(20), joiner);
    expect(b.entries).toEqual([{ time: T(1), stream: 'stdout', text: 'xxxxxy' }]);
    parseCriLog(rec(T(3), 'stderr', 'P', 'cut'), joiner);
    expect(joiner.flush()).toEqual([{ time: T(3), stream: 'stderr', text: 'cut' }]);
    expect(joiner.flush()).toEqual([]);
  });

  it('times: RFC3339 with nanoseconds, fewer digits, or an offset; since as a time or a Go-style duration', () => {
    expect(rfc3339ToNs('1970-01-01T00:00:01.000000002Z')).toBe(1_000_000_002n);
    expect(rfc3339ToNs('1970-01-01T00:00:01.5Z')).toBe(1_500_000_000n);
    expect(rfc3339ToNs('1970-01-01T01:00:00+01:00')).toBe(0n);
    expect(rfc3339ToNs('not a time')).toBeUndefined();
    expect(parseSince('1h30m', 10_000_000)).toBe(10_000_000n * 1_000_000n - 5_400_000_000_000n);
    expect(parseSince('1.5s', 2000)).toBe(500_000_000n);
    expect(parseSince(T(5), 0)).toBe(rfc3339ToNs(T(5)));
    expect(parseSince('5 minutes', 0)).toBeUndefined();
    expect(parseSince('5m ago', 0)).toBeUndefined();
  });

  it('formats as kubectl: the time first only with timestamps', () => {
    const e: LogEntry = { time: T(1), stream: 'stdout', text: 'hi' };
    expect(formatLogEntry(e, false)).toBe('hi\n');
    expect(formatLogEntry(e, true)).toBe(`${T(1)} hi\n`);
  });

  it("prints a time as kubelet does, in UTC with nine digits and Z, whatever offset form the writer used (conmon's +00:00)", () => {
    expect(formatLogEntry({ time: '2026-11-23T10:00:01.5+00:00', stream: 'stdout', text: 'hi' }, true)).toBe(`${T(1, 500_000_000)} hi\n`);
    expect(formatLogEntry({ time: '2026-11-23T12:00:01.000000007+02:00', stream: 'stdout', text: 'hi' }, true)).toBe(`${T(1, 7)} hi\n`);
  });
});

describe('the reader', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pss1-unit-log-'));
    path = join(dir, '0.log');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const all = async (it: AsyncIterable<LogEntry>) => {
    const out: LogEntry[] = [];
    for await (const e of it) out.push(e);
    return out;
  };

  it('tail counts joined lines after the filters; since and stream filter; a missing file is NotFound', async () => {
    await writeFile(
      path,
      rec(T(1), 'stdout', 'F', 'one') +
        rec(T(2), 'stderr', 'F', 'two') +
        rec(T(3), 'stdout', 'P', 'thr') +
        rec(T(4), 'stdout', 'F', 'ee') +
        rec(T(5), 'stdout', 'F', 'four'),
    );
    const never = async () => false;
    const texts = async (o: Parameters<typeof openContainerLog>[1]) =>
      (await all(await openContainerLog(path, o, never))).map((e) => e.text);
    expect(await texts({})).toEqual(['one', 'two', 'three', 'four']);
    expect(await texts({ tail: 2 })).toEqual(['three', 'four']);
    expect(await texts({ tail: 0 })).toEqual([]);
    expect(await texts({ tail: 2, stream: 'stderr' })).toEqual(['two']);
    expect(await texts({ sinceNs: rfc3339ToNs(T(2)) })).toEqual(['two', 'three', 'four']);
    // a joined line is as old as its first record
    expect(await texts({ sinceNs: rfc3339ToNs(T(4)) })).toEqual(['four']);
    await expect(openContainerLog(join(dir, 'nope.log'), {}, never)).rejects.toMatchObject({ code: 'NotFound' });
    await expect(openContainerLog(path, { tail: -2 }, never)).rejects.toMatchObject({ code: 'InvalidArgument' });
  });

  it('tail on a large file reads from the end: a long P…F line across the window edge stays whole; a rare stream is found far back', async () => {
    const parts: string[] = [rec(T(0), 'stderr', 'F', 'the only stderr line')];
    for (let i = 0; i < 4000; i++) parts.push(rec(T(1, i), 'stdout', 'F', `line-${i}`));
    const chunk = 'x'.repeat(16 * 1024);
    // a 80 KiB line in five records: longer than the first 64 KiB window
    for (let i = 0; i < 4; i++) parts.push(rec(T(2, i), 'stdout', 'P', chunk));
    parts.push(rec(T(2, 9), 'stdout', 'F', 'end'));
    parts.push(rec(T(3), 'stdout', 'F', 'last'));
    await writeFile(path, parts.join(''));
    const never = async () => false;
    const got = await all(await openContainerLog(path, { tail: 2 }, never));
    expect(got.map((e) => e.text.length)).toEqual([4 * chunk.length + 3, 4]);
    expect(got[0]!.time).toBe(T(2, 0));
    expect((await all(await openContainerLog(path, { tail: 1, stream: 'stderr' }, never))).map((e) => e.text)).toEqual([
      'the only stderr line',
    ]);
    expect((await all(await openContainerLog(path, { tail: 3, sinceNs: rfc3339ToNs(T(3)) }, never))).map((e) => e.text)).toEqual(['last']);
    expect((await all(await openContainerLog(path, { tail: 10_000 }, never))).length).toBe(4003);
  });

  it('tail then follow: lines after the tail arrive once, a P record pending at the end is joined with its F', async () => {
    await writeFile(path, rec(T(1), 'stdout', 'F', 'a') + rec(T(2), 'stdout', 'F', 'b') + rec(T(3), 'stdout', 'P', 'c1-'));
    let running = true;
    const got: string[] = [];
    const reader = (async () => {
      for await (const e of await openContainerLog(path, { follow: true, tail: 1, pollMs: 10 }, async () => running)) got.push(e.text);
    })();
    for (let i = 0; i < 500 && got.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    await appendFile(path, rec(T(4), 'stdout', 'F', 'c2'));
    for (let i = 0; i < 500 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    running = false;
    await reader;
    expect(got).toEqual(['b', 'c1-c2']);
  });

  it('follow: new lines appear, a rotation (rename, new file at log_path) loses and repeats nothing, the end comes after the exit', async () => {
    await writeFile(path, rec(T(1), 'stdout', 'F', 'before'));
    let running = true;
    const got: string[] = [];
    const reader = (async () => {
      for await (const e of await openContainerLog(path, { follow: true, pollMs: 10 }, async () => running)) got.push(e.text);
    })();
    const until = async (n: number) => {
      for (let i = 0; i < 500 && got.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await until(1);
    await appendFile(path, rec(T(2), 'stdout', 'F', 'appended') + rec(T(3), 'stdout', 'P', 'half-'));
    await until(2);
    // the shim wrote the rest of the line and one more before the rename; then it reopens log_path
    await appendFile(path, rec(T(4), 'stdout', 'F', 'done') + rec(T(5), 'stderr', 'F', 'last in old'));
    await rename(path, `${path}.20261123-100005`);
    await writeFile(path, rec(T(6), 'stdout', 'F', 'first in new'));
    await until(5);
    await appendFile(path, rec(T(7), 'stdout', 'P', 'never finished'));
    running = false;
    await reader;
    expect(got).toEqual(['before', 'appended', 'half-done', 'last in old', 'first in new', 'never finished']);
  });

  it('follow: a file truncated in place is read again from its start', async () => {
    await writeFile(path, rec(T(1), 'stdout', 'F', 'a long first line that makes the file big'));
    let running = true;
    const got: string[] = [];
    const reader = (async () => {
      for await (const e of await openContainerLog(path, { follow: true, pollMs: 10 }, async () => running)) got.push(e.text);
    })();
    for (let i = 0; i < 500 && got.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    await truncate(path, 0);
    await new Promise((r) => setTimeout(r, 50));
    await appendFile(path, rec(T(2), 'stdout', 'F', 'b'));
    for (let i = 0; i < 500 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    running = false;
    await reader;
    expect(got).toEqual(['a long first line that makes the file big', 'b']);
  });

  it('follow stops at once when aborted', async () => {
    await writeFile(path, rec(T(1), 'stdout', 'F', 'x'));
    const ac = new AbortController();
    const got: string[] = [];
    const reader = (async () => {
      for await (const e of await openContainerLog(path, { follow: true, pollMs: 10_000, signal: ac.signal }, async () => true))
        got.push(e.text);
    })();
    for (let i = 0; i < 500 && got.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await reader;
    expect(got).toEqual(['x']);
  });
});
