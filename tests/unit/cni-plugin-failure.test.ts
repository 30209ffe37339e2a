import { describe, expect, it } from 'vitest';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { execResult, failedExec } from '../../testkit/exec-result';
import { describeFailure } from '../../electron/engine/cni/plugin-failure';
import { validateContainerId, validateIfName, validateNetworkName } from '../../electron/engine/cni/names';
import { execPlugin, type ExecContext } from '../../electron/engine/cni/plugin-exec';
import type { CniCallRecord } from '../../electron/engine/cni/types';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

describe('plugin failure text (libcni RawExec.pluginErr)', () => {
  it.each<[string, Partial<ExecResult>, { code?: number; msg: string; details?: string; text?: string }]>([
    ['error JSON', { stdout: '{"code":7,"msg":"bad","details":"more"}' }, { code: 7, msg: 'bad', details: 'more', text: 'bad; more' }],
    ['error JSON with cniVersion', { stdout: '{"cniVersion":"1.0.0","code":11,"msg":"later"}' }, { code: 11, msg: 'later', text: 'later' }],
    ['error JSON with empty details', { stdout: '{"code":4,"msg":"env","details":""}' }, { code: 4, msg: 'env', text: 'env' }],
    ['stderr only', { stderr: 'kaput\n', exitCode: 2 }, { msg: 'netplugin failed: "kaput\\n": exit status 2' }],
    ['nothing at all', { exitCode: 5 }, { msg: 'netplugin failed with no error message: exit status 5' }],
    ['killed by a signal', { exitCode: null, signal: 'SIGKILL' }, { msg: 'netplugin failed with no error message: signal: killed' }],
    [
      'garbage stdout',
      { stdout: 'panic: oh no' },
      { msg: 'netplugin failed but error parsing its diagnostic message "panic: oh no": not a CNI error object' },
    ],
    [
      'stdout with a wrongly typed code',
      { stdout: '{"code":"7","msg":"x"}' },
      { msg: 'netplugin failed but error parsing its diagnostic message "{\\"code\\":\\"7\\",\\"msg\\":\\"x\\"}": not a CNI error object' },
    ],
    ['timeout', { exitCode: null, signal: 'SIGKILL', timedOut: true }, { msg: 'netplugin timed out after 250 ms and was killed' }],
    ['cancel', { exitCode: null, signal: 'SIGKILL', canceled: true }, { msg: 'netplugin was canceled and killed' }],
  ])('%s', (_n, r, want) => {
    const f = describeFailure(failedExec(r), 250);
    expect(f).toMatchObject({ ...want, text: want.text ?? want.msg });
  });
});

describe('identifier validation (pkg/utils)', () => {
  it.each<[string, ReturnType<typeof validateContainerId>]>([
    ['abc123', undefined],
    ['a_b.c-d', undefined],
    ['', { code: 3, msg: 'missing containerID' }],
    ['-leading', { code: 4, msg: 'invalid characters in containerID', details: '-leading' }],
    ['a/b', { code: 4, msg: 'invalid characters in containerID', details: 'a/b' }],
  ])('container id %j', (id, want) => expect(validateContainerId(id)).toEqual(want));

  it.each<[string, string | undefined]>([
    ['eth0', undefined],
    ['', 'interface name is empty'],
    ['a234567890123456', 'interface name is too long'],
    ['..', 'interface name is . or ..'],
    ['eth 0', 'interface name contains / or : or whitespace characters'],
    ['eth:0', 'interface name contains / or : or whitespace characters'],
  ])('ifname %j', (name, msg) => expect(validateIfName(name)?.msg).toBe(msg));

  it('network names follow the container id pattern', () => {
    expect(validateNetworkName('containerd-net')).toBeUndefined();
    expect(validateNetworkName('no spaces')?.code).toBe(7);
  });
});

describe('execPlugin through an injected ProcessRunner', () => {
  async function withBinary<T>(fn: (ctx: (runner: ProcessRunner, records: CniCallRecord[]) => ExecContext) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(path.join(tmpdir(), 'psc-cni-exec-'));
    try {
      await writeFile(path.join(dir, 'fake'), '');
      return await fn((runner, records) => ({
        runner,
        binDirs: [dir],
        baseEnv: { PATH: '/bin' },
        timeoutMs: 1234,
        record: (r) => records.push(r),
      }));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const inv = {
    network: 'n',
    ifName: 'eth0',
    verb: 'ADD' as const,
    index: 0,
    type: 'fake',
    stdin: '{"a":1}',
    cniEnv: { CNI_COMMAND: 'ADD' },
  };

  it('passes stdin, env and timeout to the runner and records the call', async () => {
    await withBinary(async (mk) => {
      const seen: ExecRequest[] = [];
      const records: CniCallRecord[] = [];
      const runner: ProcessRunner = { run: async (req) => (seen.push(req), execResult({ stdout: 'ok' })) };
      const out = await execPlugin(mk(runner, records), inv, (s) => s.toUpperCase());
      expect(out).toBe('OK');
      expect(seen[0]).toMatchObject({ input: '{"a":1}', env: { PATH: '/bin', CNI_COMMAND: 'ADD' }, timeoutMs: 1234 });
      expect(records[0]).toMatchObject({
        step: 'cni.plugin',
        ok: true,
        label: 'ADD fake (n/eth0)',
        plugin: { stdin: '{"a":1}', stdout: 'ok', exitCode: 0, env: { CNI_COMMAND: 'ADD' } },
      });
    });
  });

  it('a reader that throws on bad output becomes a recorded CniError', async () => {
    await withBinary(async (mk) => {
      const records: CniCallRecord[] = [];
      const runner: ProcessRunner = { run: async () => execResult({ stdout: '{' }) };
      const p = execPlugin(mk(runner, records), inv, () => {
        throw new Error('failed to unmarshal raw result: x');
      });
      await expect(p).rejects.toMatchObject({
        code: 'CniError',
        message: 'plugin type="fake" failed (add): failed to unmarshal raw result: x',
      });
      expect(records[0]!.ok).toBe(false);
    });
  });

  it('a runner that cannot spawn is reported like Go fork/exec', async () => {
    await withBinary(async (mk) => {
      const records: CniCallRecord[] = [];
      const spawnError = Object.assign(new Error('cannot start'), { cause: Object.assign(new Error('EACCES'), { code: 'EACCES' }) });
      const runner: ProcessRunner = {
        run: async () => {
          throw spawnError;
        },
      };
      await expect(execPlugin(mk(runner, records), { ...inv, pluginName: 'own' }, () => 0)).rejects.toThrow(
        /^plugin type="fake" name="own" failed \(add\): netplugin failed with no error message: fork\/exec .*fake: EACCES$/,
      );
      expect(records[0]!.plugin!.exitCode).toBeNull();
    });
  });
});
