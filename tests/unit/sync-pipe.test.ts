/**
 * Starting a daemon that answers over a sync pipe (fd 3), as conmon does: in-process and from the spawn helper, the
 * same outcome: its first JSON line (without waiting for it to exit), or its exit and stderr when it closes its
 * pipes without one, or the spawn failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpawnHelperRunner } from '../../electron/engine/os/spawn-helper';
import { firstJsonLine, launchWithSyncPipeInProcess, type SyncPipeRequest } from '../../electron/engine/os/sync-pipe';

const helper = new SpawnHelperRunner();
beforeAll(() => helper.ready());
afterAll(() => helper.close());

const daemon = (script: string): SyncPipeRequest => ({ file: 'sh', args: ['-c', script], cwd: '/tmp', env: { PATH: process.env.PATH } });

describe.each([
  ['in-process', (r: SyncPipeRequest) => launchWithSyncPipeInProcess(r)],
  ['from the spawn helper', (r: SyncPipeRequest) => helper.launchWithSyncPipe(r)],
])('a daemon on a sync pipe, started %s', (how, launch) => {
  it('answers with its first JSON line while the daemon runs on', async () => {
    const o = await launch(daemon('echo starting; echo "{\\"data\\": $$, \\"ppid\\": $PPID}" >&3; exec sleep 30'));
    expect(o.kind).toBe('line');
    const { data, ppid } = JSON.parse((o as { line: string }).line) as { data: number; ppid: number };
    try {
      // still running: the answer did not wait for its exit
      expect(() => process.kill(data, 0)).not.toThrow();
      if (how === 'from the spawn helper') expect(ppid).not.toBe(process.pid);
      else expect(ppid).toBe(process.pid);
    } finally {
      process.kill(data, 'SIGKILL');
    }
  });

  it('a JSON line written in pieces is waited for until it is whole', async () => {
    const o = await launch(daemon('printf "{\\"data\\": " >&3; sleep 0.2; printf "7}\\n" >&3; exec sleep 0.5'));
    expect(o).toMatchObject({ kind: 'line', line: '{"data": 7}' });
  });

  it('closing its pipes without a line gives its exit code and stderr', async () => {
    expect(await launch(daemon('echo "no runtime" >&2; exit 3'))).toEqual({ kind: 'closed', exitCode: 3, stderr: 'no runtime\n' });
  });

  it('a binary that is not there is a spawn error with its code', async () => {
    expect(await launch({ ...daemon(''), file: '/nonexistent/conmon' })).toMatchObject({ kind: 'spawn-error', code: 'ENOENT' });
  });
});

describe('firstJsonLine', () => {
  it('takes the first whole document among the lines, the last piece once it parses', () => {
    expect(firstJsonLine('noise\n{"data": 1}\n{"data": 2}\n')).toBe('{"data": 1}');
    expect(firstJsonLine('{"data": 1')).toBeUndefined();
    expect(firstJsonLine('{"data": 12}')).toBe('{"data": 12}');
    expect(firstJsonLine('{not json}\n')).toBeUndefined();
  });
});
